package main

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
)

var workers = []int{1, 2, 4, 8}

// row is one line of a table: the sub-benchmark and its label.
type row struct{ sub, label string }

var queueRows = []row{
	{"goqite", "goqite Receive + Delete"},
	{"goqite-payment", "goqite, payment updated with the Delete"},
	{"claim-finalize", "leaselab claim + finalize"},
	{"fused", "fused step (finalize + next claim)"},
	{"batch-claim", "batch claim K=16, finalize each"},
	{"batch", "batch claim + batch finalize, K=16"},
	{"claim-finalize-fair", "claim + finalize, fair queue"},
	{"fused-fair", "fused step, fair queue"},
}

var fairRows = []row{
	{"goqite", "goqite (SQLite busy handler)"},
	{"claim-finalize", "claim + finalize (SQLite busy handler)"},
	{"claim-finalize-retry", "claim + finalize, busy_timeout 0 + retry in Go"},
	{"claim-finalize-fifo", "claim + finalize, queue, 1 transaction a turn"},
	{"claim-finalize-fair", "claim + finalize, fair queue (2 ms turns)"},
	{"fused", "fused step (SQLite busy handler)"},
	{"fused-fair", "fused step, fair queue (2 ms turns)"},
}

func queue(n int, sub string) string { return fmt.Sprintf("Queues/workers=%d/%s", n, sub) }

func backlogName(sub string, queued int) string {
	return fmt.Sprintf("Backlog/%s/queued=%d", sub, queued)
}

func report(w io.Writer, r results) {
	fmt.Fprintf(w, "Medians of %d runs; ratios are medians of the ratios of runs made side by side.\n", r.runs())
	fmt.Fprintf(w, "1,000 messages stay queued behind the work unless said.\n\n")
	if v, ok := r.get("RawLimit", "msgs/s"); ok {
		fmt.Fprintf(w, "raw limit, one connection, BEGIN IMMEDIATE; UPDATE; COMMIT: %s tx/s\n\n", num(v))
	}
	throughput(w, r)
	backlog(w, r)
	fairness(w, r)
	targets(w, r)
}

func throughput(w io.Writer, r results) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "msgs/s (× goqite)\t1 worker\t2 workers\t4 workers\t8 workers\t")
	for _, rw := range queueRows {
		cells := []string{rw.label}
		seen := false
		for _, n := range workers {
			v, ok := r.get(queue(n, rw.sub), "msgs/s")
			x, xok := r.ratio(queue(n, rw.sub), queue(n, "goqite"))
			switch {
			case !ok:
				cells = append(cells, "–")
			case rw.sub == "goqite" || !xok:
				cells = append(cells, num(v))
			default:
				cells = append(cells, fmt.Sprintf("%s  %.2f×", num(v), x))
			}
			seen = seen || ok
		}
		if seen {
			fmt.Fprintln(tw, strings.Join(cells, "\t")+"\t")
		}
	}
	tw.Flush()
	fmt.Fprintln(w)
}

func backlog(w io.Writer, r results) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "backlog, 1 worker, msgs/s\t1,000 queued\t100,000 queued\t100k / 1k\t")
	for _, rw := range []row{{"claim-finalize", "claim + finalize"}, {"fused", "fused step"}} {
		small, ok1 := r.get(backlogName(rw.sub, 1000), "msgs/s")
		large, ok2 := r.get(backlogName(rw.sub, 100_000), "msgs/s")
		x, _ := r.ratio(backlogName(rw.sub, 100_000), backlogName(rw.sub, 1000))
		if ok1 && ok2 {
			fmt.Fprintf(tw, "%s\t%s\t%s\t%.2f\t\n", rw.label, num(small), num(large), x)
		}
	}
	tw.Flush()
	fmt.Fprintln(w)
}

func fairness(w io.Writer, r results) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "fairness, 8 workers\tmsgs/s\tlongest wait\tp99 wait\tsmallest share\t")
	seen := false
	for _, rw := range fairRows {
		name := "Fairness/workers=8/" + rw.sub
		v, ok := r.get(name, "msgs/s")
		if !ok {
			continue
		}
		seen = true
		maxw, _ := r.get(name, "max-wait-ms")
		p99, _ := r.get(name, "p99-wait-ms")
		share, _ := r.get(name, "min-share-%")
		fmt.Fprintf(tw, "%s\t%s\t%.0f ms\t%.1f ms\t%.1f %%\t\n", rw.label, num(v), maxw, p99, share)
	}
	tw.Flush()
	if seen {
		fmt.Fprintln(w, "(a wait is one transaction call, from asking to done; a fair share is 12.5 %)")
		fmt.Fprintln(w)
	}
}

// targets checks the ratios issue 5 asks for.
func targets(w io.Writer, r results) {
	every := func(sub string, want float64) string {
		var parts []string
		pass := true
		for _, n := range workers {
			x, ok := r.ratio(queue(n, sub), queue(n, "goqite"))
			if !ok {
				return "not measured"
			}
			parts = append(parts, fmt.Sprintf("%.2f", x))
			pass = pass && x >= want
		}
		return verdict(pass) + " (" + strings.Join(parts, ", ") + ")"
	}
	fmt.Fprintln(w, "targets of issue 5:")
	fmt.Fprintln(w, "  claim + finalize ≥ 1.0× goqite at 1, 2, 4, 8 workers:", every("claim-finalize", 1.0))
	fmt.Fprintln(w, "  fused step ≥ 1.5× goqite at 1, 2, 4, 8 workers:", every("fused", 1.5))
	var same []string
	for _, n := range workers {
		if x, ok := r.ratio(queue(n, "claim-finalize"), queue(n, "goqite-payment")); ok {
			same = append(same, fmt.Sprintf("%.2f", x))
		}
	}
	if len(same) > 0 {
		fmt.Fprintf(w, "  (claim + finalize against goqite with the payment updated in its Delete: %s)\n", strings.Join(same, ", "))
	}
	if x, ok := r.ratio(queue(1, "batch"), queue(1, "goqite")); ok {
		y, yok := r.ratio(queue(1, "batch-claim"), queue(1, "goqite"))
		fmt.Fprintf(w, "  batch claim ≥ 3× goqite at 1 worker: %s (%.2f; with single finalizes %s)\n",
			verdict(x >= 3), x, fmtRatio(y, yok))
	}
	for _, sub := range []string{"claim-finalize", "fused"} {
		if x, ok := r.ratio(backlogName(sub, 100_000), backlogName(sub, 1000)); ok {
			fmt.Fprintf(w, "  %s with 100,000 queued within 15%% of 1,000: %s (%.2f)\n", sub, verdict(x >= 0.85), x)
		}
	}
	targets34(w, r)
}

// targets34 checks the ratios issue 34 asks for, each the median of the ratios of the runs side
// by side, with the lowest and highest in brackets.
func targets34(w io.Writer, r results) {
	every := func(sub, base string, want float64) string {
		var parts []string
		pass := true
		for _, n := range workers {
			x, lo, hi, ok := r.ratioRange(queue(n, sub), queue(n, base))
			if !ok {
				return "not measured"
			}
			parts = append(parts, fmt.Sprintf("%.2f [%.2f–%.2f]", x, lo, hi))
			pass = pass && x >= want
		}
		return verdict(pass) + " (" + strings.Join(parts, ", ") + ")"
	}
	fmt.Fprintln(w, "targets of issue 34 (medians [lowest–highest] of the ratios side by side):")
	fmt.Fprintln(w, "  claim + finalize ≥ 1.3× goqite at 1, 2, 4, 8 workers:", every("claim-finalize", "goqite", 1.3))
	fmt.Fprintln(w, "  claim + finalize ≥ 1.6× goqite with the payment at 1, 2, 4, 8 workers:", every("claim-finalize", "goqite-payment", 1.6))
	if x, lo, hi, ok := r.ratioRange(queue(1, "fused"), "RawLimit"); ok {
		fmt.Fprintf(w, "  fused step ≥ 0.5 of the raw write-transaction rate, 1 worker: %s (%.2f [%.2f–%.2f])\n", verdict(x >= 0.5), x, lo, hi)
	}
}

func fmtRatio(x float64, ok bool) string {
	if !ok {
		return "not measured"
	}
	return fmt.Sprintf("%.2f", x)
}

func verdict(ok bool) string {
	if ok {
		return "met"
	}
	return "MISSED"
}

// num renders v with thousands separators: 12,345.
func num(v float64) string {
	s := fmt.Sprintf("%.0f", v)
	var b strings.Builder
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	return b.String()
}
