package cli

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"leaselab/assets"
	"leaselab/engine"
	"leaselab/engine/scenario"
	"leaselab/engine/share"
	"leaselab/engine/words"
)

const shareUsage = `Usage: leaselab share NAME|FILE [flags]

Prints a share code: a short line that carries the scenario (a built-in lesson's name, or the
file's text, compressed) and the settings its flags give it, as run takes them. "leaselab --code
CODE" opens the lab on it, "leaselab run --code CODE" runs it headless. In the lab, S shows the
code of the moment on screen (the moves made since the start, replayed when it is opened), and
"leaselab explore" prints the code of each counterexample it finds.
`

func cmdShare(args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("share", shareUsage, stderr)
	var sf scenarioFlags
	sf.register(fs, nil)
	pos, err := parseInterleaved(fs, args)
	if err != nil {
		return usageFlag(err)
	}
	if len(pos) != 1 {
		fs.Usage()
		return usageError{fmt.Errorf("share: want one scenario (a name or a file), got %d", len(pos))}
	}
	for _, name := range []string{"db", "reset"} {
		if flagSet(fs, name) {
			return usageError{fmt.Errorf("share: --%s is where a run keeps its database, not part of a scenario: a code does not carry it (give it to the command that opens the code)", name)}
		}
	}
	// The scenario is read and its settings applied as run does, so that a code is never made
	// of what run refuses (whatever the database: a PostgreSQL lesson has a code too).
	data, source, err := assets.Load(pos[0], scenario.MaxScenarioSize)
	if err != nil {
		return usageError{err}
	}
	sc, err := scenario.Parse(source, data)
	if err != nil {
		return err
	}
	o, err := sf.overrides(fs)
	if err == nil {
		err = sc.Apply(o)
	}
	if err == nil {
		err = sc.CheckSize()
	}
	if err != nil {
		return usageError{err}
	}
	c, err := codeOf(pos[0], o)
	if err != nil {
		return err
	}
	code, err := share.Encode(c)
	if err != nil {
		return err
	}
	_, err = fmt.Fprintln(stdout, code)
	return err
}

// flagSet says whether the flag called name was given.
func flagSet(fs *flag.FlagSet, name string) bool {
	set := false
	fs.Visit(func(f *flag.Flag) { set = set || f.Name == name })
	return set
}

// codeOf is the code of nameOrFile opened with overrides o, at its start: a built-in lesson by
// its name, a file by its text.
func codeOf(nameOrFile string, o engine.Overrides) (share.Code, error) {
	if _, _, ok := assets.Scenario(nameOrFile); ok {
		return share.Code{Lesson: nameOrFile, Overrides: o}, nil
	}
	data, _, err := assets.Load(nameOrFile, scenario.MaxScenarioSize)
	if err != nil {
		return share.Code{}, usageError{err}
	}
	return share.Code{File: data, Overrides: o}, nil
}

// overrideArgs are the flags that give a scenario the overrides o, as run takes them.
func overrideArgs(o engine.Overrides) []string {
	var args []string
	if o.Workers != 0 {
		args = append(args, "--workers="+strconv.Itoa(o.Workers))
	}
	if o.Messages != 0 {
		args = append(args, "--messages="+strconv.Itoa(o.Messages))
	}
	if o.Lease != 0 {
		args = append(args, "--lease="+o.Lease.String())
	}
	if o.Seed != nil {
		args = append(args, "--seed="+strconv.FormatInt(*o.Seed, 10))
	}
	if o.FailRate != nil {
		args = append(args, "--fail-rate="+strconv.FormatFloat(*o.FailRate, 'g', -1, 64))
	}
	if o.MaxAttempts != 0 {
		args = append(args, "--max-attempts="+strconv.Itoa(o.MaxAttempts))
	}
	for _, k := range slices.Sorted(maps.Keys(o.Skew)) {
		args = append(args, fmt.Sprintf("--skew=%s=%+dms", k, o.Skew[k].Milliseconds()))
	}
	for _, k := range slices.Sorted(maps.Keys(o.Toggles)) {
		args = append(args, fmt.Sprintf("--%s=%t", k, o.Toggles[k]))
	}
	return args
}

// sharedMoment is a code made ready to open: the scenario to open (a lesson's name, or a file
// written in a temporary folder), the flags of its settings, and the moves to replay.
type sharedMoment struct {
	code     share.Code
	scenario string
	args     []string
	moves    []engine.Command
}

// openCode reads a code given to --code and writes, when it needs one, its scenario file in the
// folder dir gives (a counterexample's, or a file's). A damaged code, a newer one, or one that
// names a lesson this leaselab does not have is a usage error (exit 2), with what is wrong.
func openCode(text string, dir func() (string, error)) (*sharedMoment, error) {
	c, err := share.Decode(text)
	if err != nil {
		return nil, usageError{fmt.Errorf("--code: %w", err)}
	}
	m := &sharedMoment{code: c, scenario: c.Lesson, args: overrideArgs(c.Overrides), moves: c.Moves}
	src := c.File
	if c.Lesson != "" {
		data, _, ok := assets.Scenario(c.Lesson)
		if !ok {
			return nil, usageError{fmt.Errorf("--code: the code opens the lesson %q, which this leaselab does not have (it has %s): it was made by another version of leaselab",
				words.Escape(c.Lesson), strings.Join(assets.Names(), ", "))}
		}
		src = data
	}
	name, text2 := "", src
	switch {
	case c.Found != nil:
		base := c.Lesson
		if base == "" {
			base = "shared"
		}
		if text2, err = share.FoundScenario(base, src, c.Overrides, c.Found); err != nil {
			return nil, usageError{fmt.Errorf("--code: its counterexample: %w", err)}
		}
		name = base + "-found" + assets.Ext
	case c.Lesson == "":
		name = "shared" + assets.Ext
	default:
		return m, nil
	}
	folder, err := dir()
	if err != nil {
		return nil, err
	}
	m.scenario = filepath.Join(folder, name)
	if err := os.WriteFile(m.scenario, text2, 0o600); err != nil {
		return nil, fmt.Errorf("--code: write its scenario: %w", err)
	}
	return m, nil
}

// applyCode parses the moment's settings into fs, after the command's own flags: a flag that
// sets the scenario or one of its settings beside --code is refused, since the code carries
// them.
func (m *sharedMoment) applyCode(fs *flag.FlagSet) error {
	var clash string
	fs.Visit(func(f *flag.Flag) {
		if clash == "" && f.Name != "code" && f.Name != "db" && f.Name != "reset" && isScenarioFlag(f.Name) {
			clash = f.Name
		}
	})
	if clash != "" {
		return usageError{fmt.Errorf("--code carries the scenario and its settings: drop --%s", clash)}
	}
	if err := fs.Parse(m.args); err != nil {
		return usageError{fmt.Errorf("--code: its settings: %w", err)}
	}
	return nil
}

// isScenarioFlag says whether the flag called name chooses a scenario or changes one.
func isScenarioFlag(name string) bool {
	if _, ok := engine.LookupToggle(name); ok {
		return true
	}
	return slices.Contains([]string{"scenario", "workers", "messages", "lease", "seed", "fail-rate", "max-attempts", "skew"}, name)
}

// Moves are the moves to replay (none without a code).
func (m *sharedMoment) Moves() []engine.Command {
	if m == nil {
		return nil
	}
	return m.moves
}

// labShare is the lab's S (ui.Config.Share): the code of the scenario the lab has open, with the
// settings its flags (or its code) gave it, and the moves made since its start.
func labShare(root *labRoot, base *sharedMoment, dir string) func(string, []engine.Entry) (string, error) {
	return func(nameOrFile string, entries []engine.Entry) (string, error) {
		o, err := root.flags.overrides(root.fs)
		if err != nil {
			return "", err
		}
		if c, ok := root.found.Load(nameOrFile); ok { // a violation the explore key found
			return shareNote(&sharedMoment{code: c.(share.Code), scenario: nameOrFile}, nameOrFile, o, entries, dir, time.Now())
		}
		return shareNote(base, nameOrFile, o, entries, dir, time.Now())
	}
}

// shareNote is what the lab's S shows: the code of the moment (the scenario nameOrFile opened
// with the lab's settings o, or the code it was opened from, and the moves recorded up to the
// position), or, when the code is too long for the status line (a scenario file travels in
// it), where it was written.
func shareNote(base *sharedMoment, nameOrFile string, o engine.Overrides, entries []engine.Entry, dir string, now time.Time) (string, error) {
	var c share.Code
	if base != nil && nameOrFile == base.scenario {
		c = base.code
	} else {
		var err error
		if c, err = codeOf(nameOrFile, o); err != nil {
			return "", err
		}
	}
	moves, all := share.MovesOf(entries)
	c.Moves = moves
	code, err := share.Encode(c)
	if err != nil {
		return "", err
	}
	at := fmt.Sprintf("step %d", len(moves))
	if !all {
		at = fmt.Sprintf("step %d, the last before the workers ran free (what they did then cannot be replayed)", len(moves))
	}
	if len(code) <= maxCodeInStatus {
		return fmt.Sprintf("share code of %s: %s (%d characters; leaselab --code CODE opens this moment)", at, code, len(code)), nil
	}
	path, err := writeCodeFile(dir, now, code)
	if err != nil {
		return "", err
	}
	return fmt.Sprintf("share code of %s: %d characters, too long for this line (it carries the scenario file): written whole to %s", at, len(code), path), nil
}

// maxCodeInStatus is the longest code the lab's status line shows: three lines at 80 columns,
// with the words around it.
const maxCodeInStatus = 200

// writeCodeFile writes code to a new file in dir (0600, never over one that is there).
func writeCodeFile(dir string, now time.Time, code string) (string, error) {
	if dir == "" {
		dir = "."
	}
	stamp := strings.ReplaceAll(now.UTC().Format("20060102T150405.000Z"), ".", "")
	for n := 1; n <= 100; n++ {
		path := filepath.Join(dir, fmt.Sprintf("leaselab-share-%s.txt", stamp))
		if n > 1 {
			path = filepath.Join(dir, fmt.Sprintf("leaselab-share-%s-%d.txt", stamp, n))
		}
		f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
		if errors.Is(err, os.ErrExist) {
			continue
		}
		if err != nil {
			return "", fmt.Errorf("write the share code: %w", err)
		}
		_, werr := fmt.Fprintln(f, code)
		if err := errors.Join(werr, f.Close()); err != nil {
			os.Remove(path)
			return "", fmt.Errorf("write the share code: %w", err)
		}
		return path, nil
	}
	return "", errors.New("write the share code: no free file name")
}
