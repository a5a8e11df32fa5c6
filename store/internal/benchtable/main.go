// Command benchtable turns the output of leaselab's store benchmarks (go test -bench, with any
// -count) into one report: msgs/s per worker count with the ratio against goqite, the raw
// SQLite limit, the backlog comparison, fairness with 8 workers, and the targets.
// Every figure is the median of the runs of the same benchmark.
//
//	go test -run '^$' -bench . -benchtime 5000x -count 3 ./store/ | go run ./store/internal/benchtable
package main

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

func main() {
	res, err := parse(os.Stdin)
	if err != nil {
		fmt.Fprintln(os.Stderr, "benchtable:", err)
		os.Exit(1)
	}
	if len(res) == 0 {
		fmt.Fprintln(os.Stderr, "benchtable: no benchmark lines on stdin")
		os.Exit(1)
	}
	report(os.Stdout, res)
}

// results maps a benchmark name (without the -GOMAXPROCS suffix) to its samples per unit.
type results map[string]map[string][]float64

var procSuffix = regexp.MustCompile(`-\d+$`)

// parse reads `go test -bench` output: "BenchmarkX/sub-2  5000  123 ns/op  4.5 msgs/s …".
func parse(r io.Reader) (results, error) {
	res := results{}
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) < 4 || !strings.HasPrefix(f[0], "Benchmark") || len(f)%2 != 0 {
			continue
		}
		name := strings.TrimPrefix(procSuffix.ReplaceAllString(f[0], ""), "Benchmark")
		if res[name] == nil {
			res[name] = map[string][]float64{}
		}
		for i := 2; i+1 < len(f); i += 2 {
			v, err := strconv.ParseFloat(f[i], 64)
			if err != nil {
				return nil, fmt.Errorf("%s: %q is not a number", f[0], f[i])
			}
			res[name][f[i+1]] = append(res[name][f[i+1]], v)
		}
	}
	return res, sc.Err()
}

// get is the median of name's samples in unit; ok is false when there are none.
func (r results) get(name, unit string) (float64, bool) {
	if len(r[name][unit]) == 0 {
		return 0, false
	}
	return median(r[name][unit]), true
}

// ratio is the median of name's msgs/s over base's, pass by pass when both ran the same number
// of times (with -count, runs of one pass sit next to each other in time, so a noisy minute
// cancels out), otherwise the ratio of the medians.
func (r results) ratio(name, base string) (float64, bool) {
	a, b := r[name]["msgs/s"], r[base]["msgs/s"]
	if len(a) == 0 || len(b) == 0 {
		return 0, false
	}
	if len(a) != len(b) {
		x, _ := r.get(name, "msgs/s")
		y, _ := r.get(base, "msgs/s")
		return x / y, true
	}
	q := make([]float64, len(a))
	for i := range a {
		q[i] = a[i] / b[i]
	}
	return median(q), true
}

// ratioRange is ratio with the lowest and highest of the ratios pass by pass (when both ran the
// same number of times; otherwise the three are the ratio of the medians).
func (r results) ratioRange(name, base string) (x, lo, hi float64, ok bool) {
	if x, ok = r.ratio(name, base); !ok {
		return 0, 0, 0, false
	}
	a, b := r[name]["msgs/s"], r[base]["msgs/s"]
	if len(a) != len(b) {
		return x, x, x, true
	}
	lo, hi = a[0]/b[0], a[0]/b[0]
	for i := range a {
		lo, hi = min(lo, a[i]/b[i]), max(hi, a[i]/b[i])
	}
	return x, lo, hi, true
}

func median(s []float64) float64 {
	s = slices.Clone(s)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

// runs is how many samples the report's figures are medians of.
func (r results) runs() int {
	n := 0
	for _, units := range r {
		n = max(n, len(units["msgs/s"]))
	}
	return n
}
