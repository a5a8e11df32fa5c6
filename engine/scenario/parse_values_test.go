package scenario_test

import (
	"fmt"
	"strings"
	"testing"

	"leaselab/engine"
	"leaselab/engine/scenario"
)

// Every number a scenario file gives is refused, at its line, when it is not a number in its
// range: NaN, infinities and negatives are words strconv and time read without complaint
// ("fail-rate: NaN" was taken, and failed every call or none). Every on/off key takes on or off
// only ("db-clock: yes" and "provider-fencing: 1" were taken as on).
func TestEveryValueIsChecked(t *testing.T) {
	const head = "name: t\nmessages: 3\nworkers: A B\n" // lines 1 to 3
	const bare = "name: t\n\n\n"                        // for messages and workers themselves
	type bad struct{ line, want string }
	var cases []bad
	for _, v := range []string{"NaN", "nan", "Inf", "+Inf", "-Inf", "-1", "-0.5", "1.5", "1e309", "0x1p-2", "½"} {
		if v != "0x1p-2" { // a hexadecimal float within 0 to 1 is a number: taken
			cases = append(cases, bad{"fail-rate: " + v, "bad fail-rate"})
		}
	}
	for _, key := range []string{"messages", "max-attempts"} {
		for _, v := range []string{"NaN", "Inf", "-1", "0", "1.5", "1e3"} {
			cases = append(cases, bad{key + ": " + v, "bad " + key})
		}
	}
	// "workers: NaN" names a worker NaN, as "workers: A B" names two.
	cases = append(cases, bad{"workers: 0", "bad workers 0"}, bad{"workers: -1", "bad workers -1"}, bad{"workers: 1e3", "bad worker name"})
	cases = append(cases, bad{"seed: NaN", "bad seed"}, bad{"seed: Inf", "bad seed"}, bad{"seed: 1.5", "bad seed"})
	for _, key := range []string{"lease", "heartbeat-every", "provider-latency", "lock-timeout", "backoff-base", "backoff-cap"} {
		for _, v := range []string{"NaN", "Infs", "-1ms", "-1h"} {
			cases = append(cases, bad{key + ": " + v, "duration for " + key})
		}
	}
	for _, v := range []string{"NaN", "-1ms", "0"} {
		cases = append(cases,
			bad{"outage: 09:00:00.100Z " + v, "outage"},
			bad{"rescuer: R every " + v, "rescuer"},
			bad{"provider-error: PAY-001 times-out " + v, "provider-error"})
	}
	cases = append(cases, bad{"slow: A NaN", "duration for slow"}, bad{"slow: A -1ms", "duration for slow"},
		bad{"skew: A NaN", "skew"}, bad{"skew: A Inf", "skew"})
	toggles := append(engine.AllToggleNames(), engine.ToggleNamesIn(engine.InRescue)...)
	for _, name := range toggles {
		for _, v := range []string{"yes", "no", "1", "0", "true", "false", "ON", "On", "of", ""} {
			cases = append(cases, bad{name + ": " + v, "bad " + name + ": want on or off"})
		}
	}
	for i, c := range cases {
		t.Run(fmt.Sprintf("%d %s", i, c.line), func(t *testing.T) {
			h := head
			if strings.HasPrefix(c.line, "messages:") || strings.HasPrefix(c.line, "workers:") {
				h = bare
			}
			_, err := scenario.Parse("v.scenario", []byte(h+c.line+"\n"))
			if err == nil || !strings.HasPrefix(err.Error(), "v.scenario:4: ") || !strings.Contains(err.Error(), c.want) {
				t.Errorf("%q: got %v, want v.scenario:4: … %s", c.line, err, c.want)
			}
		})
	}

	steps := []bad{
		{"run crash-rate=NaN", "crash-rate"}, {"run pause-rate=-0.1", "pause-rate"}, {"run crash-rate=Inf", "crash-rate"},
		{"A step -1", "bad count"}, {"A step NaN", "bad count"}, {"A step 0", "bad count"},
		{"clock +NaN", "clock"}, {"clock +-1ms", "clock"}, {"clock +0ms", "clock"},
		{"set lease NaN", "lease"}, {"set lease -1s", "lease"}, {"set provider-latency -1ms", "provider-latency"},
	}
	for _, name := range toggles {
		steps = append(steps, bad{"set " + name + " yes", "want on or off"}, bad{"set " + name + " 1", "want on or off"})
	}
	for i, c := range steps {
		t.Run(fmt.Sprintf("step %d %s", i, c.line), func(t *testing.T) {
			_, err := scenario.Parse("v.scenario", []byte(head+"steps:\n  "+c.line+"\n"))
			if err == nil || !strings.HasPrefix(err.Error(), "v.scenario:5: ") || !strings.Contains(err.Error(), c.want) {
				t.Errorf("%q: got %v, want v.scenario:5: … %s", c.line, err, c.want)
			}
		})
	}
}

// A rescuer's name is its own: one named as a worker declared before it was refused, and one
// named as a worker declared after it must be too (it was taken, and R's steps and the worker's
// became one).
func TestRescuerAndWorkerNamesApart(t *testing.T) {
	for _, text := range []string{
		"name: t\nworkers: A B\nrescuer: A every 200ms\n",
		"name: t\nrescuer: A every 200ms\nworkers: A B\n",
		"name: t\nrescuer: A every 200ms\nworker: A\n",
	} {
		_, err := scenario.Parse("r.scenario", []byte(text))
		if err == nil || !strings.HasPrefix(err.Error(), "r.scenario:3: ") {
			t.Errorf("%q: got %v, want an error at line 3", text, err)
		}
	}
}
