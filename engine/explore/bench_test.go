package explore

import (
	"syscall"
	"testing"
	"time"
)

// BenchmarkExplorePlayground searches the playground, every guard on, to depth 7 with one crash
// and two clock moves, once per iteration, and reports the search's own figures per restore
// option: transitions (states reached) per second of wall time, the CPU time this process
// spent per transition (the machine is shared: wall time waits for a core, CPU time does not),
// the distinct states and the time per database restore.
func BenchmarkExplorePlayground(b *testing.B) {
	for _, how := range []Restore{RestoreRows, RestoreMemory, RestoreFile, RestoreReplay} {
		b.Run(string(how), func(b *testing.B) {
			sc := lesson(b, "playground", nil)
			bounds := DefaultBounds()
			bounds.Depth = 7
			var states, distinct, restores int
			var secs, restoreSecs float64
			cpu0 := cpuTime()
			for i := 0; i < b.N; i++ {
				res := search(b, sc, bounds, how)
				states, distinct, restores = states+res.States, res.Distinct, restores+res.Restores
				secs += res.Elapsed.Seconds()
				restoreSecs += res.RestoreTime.Seconds()
			}
			cpu := cpuTime() - cpu0
			b.ReportMetric(float64(states)/secs, "transitions/s")
			b.ReportMetric(float64(cpu.Microseconds())/float64(states), "cpu-µs/transition")
			b.ReportMetric(float64(distinct), "distinct")
			b.ReportMetric(restoreSecs/float64(restores)*1e6, "µs/restore")
		})
	}
}

// cpuTime is the CPU time this process has used, user and system.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkExploreReductions searches the playground (depth 7) and aba-fencing (depth 8), every
// guard on, with each reduction off and on (and both on, on two databases at once: both-2dbs),
// restoring rows, and reports the search's figures:
// states met, moves made and distinct states per search, moves per second of wall time and the
// CPU time per move.
func BenchmarkExploreReductions(b *testing.B) {
	for _, c := range []struct {
		name  string
		depth int
	}{{"playground", 7}, {"aba-fencing", 8}} {
		for _, red := range []struct {
			name              string
			noSym, noSleepSet bool
			dbs               int
		}{{"full", true, true, 1}, {"symmetry", false, true, 1}, {"sleep-sets", true, false, 1}, {"both", false, false, 1},
			{"both-2dbs", false, false, 2}} {
			b.Run(c.name+"/"+red.name, func(b *testing.B) {
				sc := lesson(b, c.name, nil)
				bounds := DefaultBounds()
				bounds.Depth = c.depth
				var moves int
				var secs float64
				var last *Result
				cpu0 := cpuTime()
				for i := 0; i < b.N; i++ {
					last = searchWith(b, sc, bounds, func(cfg *Config) {
						cfg.NoSymmetry, cfg.NoSleepSets = red.noSym, red.noSleepSet
						for k := 1; k < red.dbs; k++ {
							cfg.MoreDBs = append(cfg.MoreDBs, newDB(b, b.TempDir()))
						}
					})
					moves += last.Moves
					secs += last.Elapsed.Seconds()
				}
				cpu := cpuTime() - cpu0
				b.ReportMetric(float64(last.States), "states")
				b.ReportMetric(float64(last.Moves), "moves")
				b.ReportMetric(float64(last.Distinct), "distinct")
				b.ReportMetric(float64(moves)/secs, "moves/s")
				b.ReportMetric(float64(cpu.Microseconds())/float64(moves), "cpu-µs/move")
			})
		}
	}
}
