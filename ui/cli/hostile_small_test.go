package cli

import (
	"os"
	"path/filepath"
	"testing"
)

// The smaller holes of issue 17: a path that looks like a built-in name, a dangling symbolic
// link as --db, " #" in a question, an expectation about an undeclared worker, and a huge
// --teacher-key file.
func TestHostileSmallOnes(t *testing.T) {
	runHostile(t, "scenario input", []hostileCase{
		{name: "`run ./after` with a file ./after in the working folder (not the built-in after)", code: exitOK, msg: "LEASELAB RUN REPORT: mine", unchanged: true,
			setup: func(t *testing.T, dir string) ([]string, string) {
				f := filepath.Join(dir, "after")
				if err := os.WriteFile(f, []byte("name: mine\nworkers: A B\nsteps:\n  run until-done\n"), 0o644); err != nil {
					t.Fatal(err)
				}
				t.Chdir(dir)
				return []string{"run", "./after", "--report-dir", ""}, f
			}},
		{name: "expect: processed_by_worker[Z] with no worker Z", code: exitUsage, msg: `q.scenario:5: unknown worker "Z" (declared: A B)`, unchanged: true,
			setup: func(t *testing.T, dir string) ([]string, string) {
				f := filepath.Join(dir, "q.scenario")
				if err := os.WriteFile(f, []byte("name: q\nworkers: A B\nsteps:\nexpect:\n  processed_by_worker[Z] >= 1\n"), 0o644); err != nil {
					t.Fatal(err)
				}
				return []string{"run", f, "--report-dir", ""}, f
			}},
	})
	runHostile(t, "questions", []hostileCase{
		askCase("ask: with \" #\" inside the question", "  ask: Who takes PAY-001 #2? | A | B = B\n  B claim PAY-001\n  run until-done\n", exitOK, ""),
	})
	runHostile(t, "database", []hostileCase{
		{name: "run --db LINK, a dangling symbolic link", code: exitEnvError, msg: "is a symbolic link to", unchanged: true,
			setup: func(t *testing.T, dir string) ([]string, string) {
				link := filepath.Join(dir, "pay.db")
				if err := os.Symlink(filepath.Join(dir, "gone", "pay.db"), link); err != nil {
					t.Fatal(err)
				}
				return []string{"run", "after", "--db", link, "--report-dir", ""}, link
			}},
	})
	runHostile(t, "serve --teacher-key", []hostileCase{
		{name: "a 2 MB file", code: exitUsage, msg: "file too large: 2097152 bytes", unchanged: true,
			setup: func(t *testing.T, dir string) ([]string, string) {
				f := filepath.Join(dir, "big.pub")
				if err := os.WriteFile(f, make([]byte, 2<<20), 0o644); err != nil {
					t.Fatal(err)
				}
				return []string{"serve", "--teacher-key", f, "--host-key", filepath.Join(dir, "k")}, f
			}},
	})
}
