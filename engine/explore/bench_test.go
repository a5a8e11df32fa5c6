package explore

import (
	"testing"
)

// BenchmarkExplorePlayground searches the playground, every guard on, to depth 7 with one crash
// and two clock moves, once per iteration, and reports the search's own figures: transitions
// (states reached) per second and the distinct states, per restore option.
func BenchmarkExplorePlayground(b *testing.B) {
	for _, how := range []Restore{RestoreRows, RestoreMemory, RestoreFile, RestoreReplay} {
		b.Run(string(how), func(b *testing.B) {
			sc := lesson(b, "playground", nil)
			bounds := DefaultBounds()
			bounds.Depth = 7
			var states, distinct, restores int
			var secs, restoreSecs float64
			for i := 0; i < b.N; i++ {
				res := search(b, sc, bounds, how)
				states, distinct, restores = states+res.States, res.Distinct, restores+res.Restores
				secs += res.Elapsed.Seconds()
				restoreSecs += res.RestoreTime.Seconds()
			}
			b.ReportMetric(float64(states)/secs, "transitions/s")
			b.ReportMetric(float64(distinct), "distinct")
			b.ReportMetric(restoreSecs/float64(restores)*1e6, "µs/restore")
		})
	}
}
