package cli

import "flag"

// registerRetry defines the flags of a provider that fails (issue 20): --fail-rate, with the
// seed (--seed) drawing which calls fail. The retry toggles (--backoff, --dead-letter) are
// registered with the others, from the toggle registry.
func (f *scenarioFlags) registerRetry(fs *flag.FlagSet, def func(string) string) {
	fs.IntVar(&f.maxAttempts, "max-attempts", 0, "attempts before a failing message is dead-lettered; turns --dead-letter on (default: "+def("max-attempts")+")")
	fs.Float64Var(&f.failRate, "fail-rate", 0, "chance, from 0 to 1, that a provider call fails (a timeout), drawn from --seed (default: "+def("fail-rate")+")")
}
