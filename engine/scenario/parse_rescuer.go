package scenario

import (
	"leaselab/engine"
	"strings"
	"time"
)

// The rescuer's and the clocks' lines of a scenario file (issue 20):
//
//	rescuer: R every 200ms      # a sweeper on its own connection, named R, sweeping every 200ms in run steps
//	skew: B +400ms              # Worker-B's clock runs 400 ms fast (repeat for more workers)
//	guarded-rescue: on          # and db-clock, provider-fencing: toggles, as any other
//
//	steps:
//	  R scan                    # the rescuer reads the expired leases (its SELECT)
//	  R rescue                  # its UPDATE of each lease it read (it reads first if it holds none)

// maxRescueEvery bounds a rescuer's schedule.
const maxRescueEvery = time.Hour

// extraHeader reads the rescuer's and the clocks' header keys; handled is false for any other.
func (p *parser) extraHeader(n int, key, val string) (handled bool, err error) {
	switch key {
	case "rescuer":
		return true, p.rescuer(n, val)
	case "skew":
		return true, p.skew(n, val)
	}
	return false, nil
}

func (p *parser) rescuer(n int, val string) error {
	f := strings.Fields(val)
	fails := len(f) == 4 && f[3] == "fails" // a pruner (engine/prune.go)
	if fails {
		f = f[:3]
	}
	if len(f) != 3 || f[1] != "every" {
		return p.errf(n, "rescuer: want \"NAME every DURATION\" (and \"fails\" for a pruner), e.g. \"rescuer: R every 200ms\", got %q", val)
	}
	if !workerNameRE.MatchString(f[0]) {
		return p.errf(n, "rescuer: bad name %q: letters and digits, starting with a letter", f[0])
	}
	if p.hasWorker(f[0]) {
		return p.errf(n, "rescuer: %q is already a worker's name", f[0])
	}
	d, err := p.duration(n, "rescuer every", f[2])
	if err != nil {
		return err
	}
	if d < time.Millisecond || d > maxRescueEvery {
		return p.errf(n, "rescuer: every %s is out of range (1ms to %s)", f[2], maxRescueEvery)
	}
	p.sc.Rescuer = &engine.RescuerSpec{Short: f[0], Every: d, Fails: fails}
	return nil
}

func (p *parser) skew(n int, val string) error {
	f := strings.Fields(val)
	if len(f) != 2 {
		return p.errf(n, "skew: want \"WORKER OFFSET\", e.g. \"skew: B +400ms\", got %q", val)
	}
	d, err := engine.ParseSkew(f[1])
	if err != nil {
		return p.errf(n, "skew: %v", err)
	}
	for i := range p.sc.Workers {
		if w := &p.sc.Workers[i]; w.Short == f[0] {
			if w.Skew != 0 {
				return p.errf(n, "skew: worker %s named twice", f[0])
			}
			w.Skew = d
			return nil
		}
	}
	return p.errf(n, "skew: unknown worker %q (declared before this line: %s)", f[0], strings.Join(p.sc.WorkerShort(), " "))
}

// rescuerStep reads `R scan` and `R rescue` when R is the declared rescuer; handled is false
// for any other step.
func (p *parser) rescuerStep(n int, f []string, st *engine.Step) (handled bool, err error) {
	r := p.sc.Rescuer
	if r == nil || f[0] != r.Short {
		return false, nil
	}
	if len(f) != 2 {
		return true, p.errf(n, "%s: the rescuer's steps are \"%s scan\" and \"%s rescue\"", f[0], f[0], f[0])
	}
	st.Name = r.Short
	switch f[1] {
	case "scan":
		st.Kind = engine.StepScan
	case "rescue":
		st.Kind = engine.StepRescue
	default:
		return true, p.errf(n, "%s %s: unknown rescuer verb (scan, rescue)", f[0], f[1])
	}
	return true, nil
}
