package cli

import (
	"flag"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"

	"leaselab/ui/common"
)

// labFace is how the lab shows itself: the screen in a theme (--theme), or plain sentences for a
// screen reader (--plain, or LEASELAB_PLAIN=1 in the environment).
type labFace struct {
	plain bool
	theme string
	env   func(string) string // os.Getenv; tests replace it
}

// plainEnv is the environment variable that asks for plain mode, as --plain does.
const plainEnv = "LEASELAB_PLAIN"

func (f *labFace) register(fs *flag.FlagSet) {
	fs.BoolVar(&f.plain, "plain", false, "print what each key changed as plain ASCII sentences, never redrawn (for a screen reader or a log; also "+plainEnv+"=1)")
	registerTheme(fs, &f.theme)
}

// registerTheme adds --theme to fs, for every command that draws a screen (lab, watch).
func registerTheme(fs *flag.FlagSet, theme *string) {
	fs.StringVar(theme, "theme", common.ThemeDefault, "the screen's styles: "+strings.Join(common.ThemeNames(), " or ")+" (high contrast, for a projector)")
}

// checkTheme refuses a theme leaselab does not have, naming the flag and the themes there are.
func checkTheme(theme string) error {
	if !slices.Contains(common.ThemeNames(), theme) {
		return fmt.Errorf("--theme %q: unknown theme: choose one of %s", theme, strings.Join(common.ThemeNames(), ", "))
	}
	return nil
}

// check reads LEASELAB_PLAIN when --plain is not given, and refuses what does not go together:
// an unknown theme, or a theme with plain mode (which draws no styles at all).
func (f *labFace) check(fs *flag.FlagSet) error {
	set := map[string]bool{}
	fs.Visit(func(fl *flag.Flag) { set[fl.Name] = true })
	if err := checkTheme(f.theme); err != nil {
		return err
	}
	if !set["plain"] {
		getenv := f.env
		if getenv == nil {
			getenv = os.Getenv
		}
		if v := getenv(plainEnv); v != "" {
			on, err := strconv.ParseBool(v)
			if err != nil {
				return fmt.Errorf("%s=%q: want 1 (plain mode) or 0", plainEnv, v)
			}
			f.plain = on
		}
	}
	if f.plain && set["theme"] {
		via := "--plain"
		if !set["plain"] {
			via = plainEnv + "=1"
		}
		return fmt.Errorf("--theme %s with %s: plain mode prints sentences without styles, so it has no theme; leave out one of them", f.theme, via)
	}
	return nil
}
