package scenario

import (
	"leaselab/engine"
	"strconv"
	"strings"
	"time"
)

// maxStepCount bounds "A step N".
const maxStepCount = 100_000

// MaxScriptActions bounds the worker actions a script's own steps ask for, all lines together
// ("A step N" counts N): 3,900 lines of "A step 100000" must be refused before they run, not run
// for hours. Run steps are bounded while they run (see maxRunActions and stallActions).
const MaxScriptActions = 100_000

// maxRunRates bounds crash-rate + pause-rate: past it a worker is interrupted after so many of
// its actions that it may never finish a message, and the run cannot make progress.
const maxRunRates = 0.5

func (p *parser) step(n int, line string) error {
	f := strings.Fields(line)
	if len(f) == 0 {
		return nil
	}
	st := engine.Step{Line: n}
	rest := strings.TrimSpace(strings.TrimPrefix(line, f[0]))
	switch f[0] {
	case "ask:", "because:", "when", "observe:", "if":
		return p.askLine(n, f[0], rest)
	case "phase", "note":
		if rest == "" {
			return p.errf(n, "%s: needs some text", f[0])
		}
		st.Kind, st.Text = engine.StepPhase, rest
		if f[0] == "note" {
			st.Kind = engine.StepNote
		}
	case "clock":
		if err := p.clockStep(n, f, &st); err != nil {
			return err
		}
	case "set":
		if err := p.setStep(n, f, &st); err != nil {
			return err
		}
	case "run", "concurrent":
		st.Kind = engine.StepRun
		if f[0] == "concurrent" {
			st.Kind = engine.StepConcurrent
		}
		if err := p.runOptions(n, f[0], f[1:], &st); err != nil {
			return err
		}
	default:
		if handled, err := p.rescuerStep(n, f, &st); handled {
			if err != nil {
				return err
			}
			break
		}
		if err := p.workerStep(n, f, &st); err != nil {
			return err
		}
		if p.actions += st.Count; p.actions > MaxScriptActions {
			return p.errf(n, "the script's steps ask for %d worker actions so far, more than the %d a script may ask for (A step N counts N)", p.actions, MaxScriptActions)
		}
	}
	if err := p.askStep(&st); err != nil {
		return err
	}
	p.sc.Steps = append(p.sc.Steps, st)
	return nil
}

func (p *parser) clockStep(n int, f []string, st *engine.Step) error {
	st.Kind = engine.StepClock
	if len(f) != 2 {
		return p.errf(n, "clock: want \"clock +600ms\", \"clock 09:00:00.600Z\" or \"clock past-lease\"")
	}
	arg := f[1]
	switch {
	case arg == "past-lease":
		st.PastLease = true
	case strings.HasPrefix(arg, "+"):
		d, err := p.duration(n, "clock", arg[1:])
		if err != nil {
			return err
		}
		if d <= 0 {
			return p.errf(n, "clock: +%s does not move the clock", arg[1:])
		}
		st.Delta = d
	default:
		t, err := time.Parse("15:04:05.000Z", arg)
		if err != nil {
			return p.errf(n, "clock: bad time %q (write it like 09:00:00.600Z)", arg)
		}
		st.At = time.Date(engine.Epoch.Year(), engine.Epoch.Month(), engine.Epoch.Day(), t.Hour(), t.Minute(), t.Second(), t.Nanosecond(), time.UTC)
	}
	return nil
}

func (p *parser) setStep(n int, f []string, st *engine.Step) error {
	st.Kind = engine.StepSet
	if len(f) != 3 {
		return p.errf(n, "set: want \"set TOGGLE on|off\" or \"set lease|heartbeat-every|provider-latency DURATION\"")
	}
	st.Name = f[1]
	switch f[1] {
	case "lease", "heartbeat-every", "provider-latency":
		d, err := p.duration(n, f[1], f[2])
		if err != nil {
			return err
		}
		st.Value = d
		return nil
	}
	if _, err := p.sc.Settings.Get(f[1]); err != nil {
		return p.errf(n, "set: %v", err)
	}
	on, err := engine.ParseOnOff(f[2])
	if err != nil {
		return p.errf(n, "set %s: %v", f[1], err)
	}
	st.On = on
	return nil
}

func (p *parser) runOptions(n int, verb string, args []string, st *engine.Step) error {
	for _, a := range args {
		switch {
		case verb == "run" && a == "random":
			st.Random = true
		case verb == "run" && a == "round-robin":
			st.Random = false
		case verb == "run" && a == "until-done":
			st.UntilDone = true
		case verb == "run" && (strings.HasPrefix(a, "crash-rate=") || strings.HasPrefix(a, "pause-rate=")):
			k, v, _ := strings.Cut(a, "=")
			r, err := strconv.ParseFloat(v, 64)
			if err != nil || !(r >= 0 && r <= maxRunRates) { // also refuses NaN
				return p.errf(n, "run: bad %s %q: want a number from 0 to %v", k, v, maxRunRates)
			}
			if k == "crash-rate" {
				st.CrashRate = r
			} else {
				st.PauseRate = r
			}
			if sum := st.CrashRate + st.PauseRate; sum > maxRunRates {
				return p.errf(n, "run: crash-rate + pause-rate is %v, more than %v: workers interrupted that often may never finish a message", sum, maxRunRates)
			}
		case verb == "run" && strings.HasPrefix(a, "crash-at="):
			act, ok := engine.ParseAction(strings.TrimPrefix(a, "crash-at="))
			if !ok {
				return p.errf(n, "run: bad crash-at %q: want an action (claim, check, finalize, …)", a)
			}
			st.CrashAt = act
		case workerNameRE.MatchString(a):
			p.ref(n, a)
			st.Workers = append(st.Workers, a)
		default:
			return p.errf(n, "%s: unknown option %q", verb, a)
		}
	}
	return nil
}

func (p *parser) workerStep(n int, f []string, st *engine.Step) error {
	if !workerNameRE.MatchString(f[0]) {
		return p.errf(n, "unknown step %q (steps: phase, note, clock, set, run, concurrent, or a worker name and a verb)", f[0])
	}
	if len(f) < 2 {
		return p.errf(n, "%s: missing verb (step, run, load, claim, select, take, check, renew, finalize, crash, restart, pause, resume)", f[0])
	}
	p.ref(n, f[0])
	st.Worker, st.Count = f[0], 1
	verb, args := f[1], f[2:]
	maxArgs := 0
	switch verb {
	case "step":
		st.Kind, maxArgs = engine.StepWorker, 1
		if len(args) == 1 {
			c, err := strconv.Atoi(args[0])
			if err != nil || c < 1 || c > maxStepCount {
				return p.errf(n, "%s step: bad count %q (1 to %d)", f[0], args[0], maxStepCount)
			}
			st.Count = c
		}
	case "run":
		st.Kind = engine.StepWorkerRun
	case "crash":
		st.Kind = engine.StepCrash
	case "restart":
		st.Kind = engine.StepRestart
	case "pause":
		st.Kind = engine.StepPause
	case "resume", "wake":
		st.Kind = engine.StepResume
	case "claim":
		st.Kind, st.Action, maxArgs = engine.StepWorker, engine.ActClaim, 1
		if len(args) == 1 {
			st.Key = args[0]
		}
	default:
		a, ok := engine.ParseAction(verb)
		if !ok {
			return p.errf(n, "%s: unknown verb %q (step, run, load, claim, select, take, check, renew, finalize, crash, restart, pause, resume)", f[0], verb)
		}
		st.Kind, st.Action = engine.StepWorker, a
	}
	if len(args) > maxArgs {
		return p.errf(n, "%s %s: unexpected %q", f[0], verb, strings.Join(args, " "))
	}
	return nil
}

func (p *parser) expectHeader(n int, head string) (engine.ExpectBlock, error) {
	b := engine.ExpectBlock{Line: n, When: map[string]bool{}}
	rest := strings.TrimSpace(strings.TrimPrefix(head, "expect"))
	if rest == "" {
		return b, nil
	}
	conds, ok := strings.CutPrefix(rest, "when ")
	if !ok {
		return b, p.errf(n, "want \"expect:\" or \"expect when TOGGLE=on|off:\", got %q", head+":")
	}
	for _, c := range strings.Fields(conds) {
		if err := p.condition(n, "expect when", c, "", b.When); err != nil {
			return b, err
		}
	}
	return b, nil
}

// condition parses c, one TOGGLE=on|off of a "when", into when. what names the line in its
// errors ("when", "expect when"); form, when set, follows the error of a malformed condition.
func (p *parser) condition(n int, what, c, form string, when map[string]bool) error {
	k, v, ok := strings.Cut(c, "=")
	switch {
	case !ok && form != "":
		return p.errf(n, "%s: want TOGGLE=on|off, got %q: %s", what, c, form)
	case !ok:
		return p.errf(n, "%s: want TOGGLE=on|off, got %q", what, c)
	}
	if _, err := p.sc.Settings.Get(k); err != nil {
		return p.errf(n, "%s: %v", what, err)
	}
	on, err := engine.ParseOnOff(v)
	if err != nil {
		return p.errf(n, "%s %s: %v", what, k, err)
	}
	if _, dup := when[k]; dup {
		return p.errf(n, "%s: %s named twice", what, k)
	}
	when[k] = on
	return nil
}

var expectOps = []string{"!=", "<=", ">=", "=", "<", ">"}

func (p *parser) expectation(n int, line string) (engine.Expectation, error) {
	e := engine.Expectation{Line: n}
	for _, op := range expectOps {
		if i := strings.Index(line, op); i > 0 {
			e.Metric, e.Op = strings.TrimSpace(line[:i]), op
			val := strings.TrimSpace(line[i+len(op):])
			if !engine.IsMetric(e.Metric) {
				return e, p.errf(n, "expect: unknown metric %q (known: %s)", e.Metric, strings.Join(engine.MetricNames(), ", "))
			}
			if w, ok := strings.CutPrefix(e.Metric, "processed_by_worker["); ok {
				// Checked once every worker is declared, as a step's worker is.
				w = strings.TrimSuffix(w, "]")
				p.pendingWorkerRefs = append(p.pendingWorkerRefs, workerRef{line: n, name: strings.TrimPrefix(w, "Worker-")})
			}
			if e.Metric == "verdict" {
				if (val != "pass" && val != "fail") || (op != "=" && op != "!=") {
					return e, p.errf(n, "expect: verdict takes \"= pass\" or \"= fail\"")
				}
				e.Word = val
				return e, nil
			}
			v, err := strconv.ParseInt(val, 10, 64)
			if err != nil {
				return e, p.errf(n, "expect: bad number %q for %s", val, e.Metric)
			}
			e.Value = v
			return e, nil
		}
	}
	return e, p.errf(n, "expect: want \"METRIC OP NUMBER\" (OP: = != < <= > >=), got %q", line)
}
