package cli

import (
	"fmt"
	"strings"
	"time"

	"leaselab/engine"
)

// skewFlag is --skew WORKER=OFFSET, repeatable.
type skewFlag struct{ m map[string]time.Duration }

func (s *skewFlag) String() string {
	if s == nil || len(s.m) == 0 {
		return ""
	}
	var parts []string
	for k, v := range s.m {
		parts = append(parts, fmt.Sprintf("%s=%+dms", k, v.Milliseconds()))
	}
	return strings.Join(parts, ",")
}

func (s *skewFlag) Set(v string) error {
	name, off, ok := strings.Cut(v, "=")
	if !ok || name == "" {
		return fmt.Errorf("want WORKER=OFFSET, e.g. B=+400ms, got %q", v)
	}
	d, err := engine.ParseSkew(off)
	if err != nil {
		return err
	}
	if s.m == nil {
		s.m = map[string]time.Duration{}
	}
	if _, dup := s.m[name]; dup {
		return fmt.Errorf("worker %s named twice", name)
	}
	s.m[name] = d
	return nil
}
