package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	gossh "golang.org/x/crypto/ssh"

	"leaselab/engine"
	"leaselab/engine/room"
	"leaselab/ui"
	"leaselab/ui/serve"
)

// serve --shared: the room plays the workers. One scenario's outbox on one database — a SQLite
// file in a folder of the server's (removed at exit), with the fair write-lock queue so that no
// attendee starves, or --db — and every attendee's connection a worker of it (engine/room, and
// ui/serve's shared.go for the screens).

// sharedMaxMessages bounds the room's outbox: every frame reads every row.
const sharedMaxMessages = labMaxMessages

// sharedOptions are the flags of serve --shared.
type sharedOptions struct {
	scenario  string
	flags     scenarioFlags // --db, --reset, --messages
	idleCrash time.Duration
	fs        *flag.FlagSet
}

// register defines --shared and its flags on serve's flag set; --max-labs is another name for
// --max-sessions.
func (o *sharedOptions) register(fs *flag.FlagSet, maxSessions *int) {
	o.fs = fs
	o.flags.notes = fs.Output()
	fs.StringVar(&o.scenario, "shared", "", "one shared room on this scenario (a built-in name or a file): every attendee a worker of one outbox")
	fs.StringVar(&o.flags.db, "db", "", "with --shared: the room's database, a file or postgres://… (default: a SQLite file in a temporary folder, removed at exit)")
	fs.BoolVar(&o.flags.reset, "reset", false, "with --shared: let --db be emptied when it holds rows")
	fs.IntVar(&o.flags.messages, "messages", 0, "with --shared: payments and outbox messages in the room (default: as the scenario declares)")
	fs.DurationVar(&o.idleCrash, "idle-crash", 0, "with --shared: an attendee without a key press this long crashes to the room (0: never; the teacher's i changes it)")
	fs.IntVar(maxSessions, "max-labs", 40, "the same as --max-sessions: labs, or with --shared attendees, at once")
}

// check refuses the shared flags without --shared, and --shared without a teacher.
func (o *sharedOptions) check(fs *flag.FlagSet, teacherKey string) error {
	var err error
	fs.Visit(func(f *flag.Flag) {
		switch f.Name {
		case "db", "reset", "messages", "idle-crash":
			if o.scenario == "" && err == nil {
				err = usageError{fmt.Errorf("--%s: only with --shared SCENARIO (each lab of serve has a database of its own)", f.Name)}
			}
		}
	})
	switch {
	case err != nil:
		return err
	case o.scenario == "":
		return nil
	case teacherKey == "":
		return usageError{errors.New("--shared needs --teacher-key FILE: the teacher's connection holds the room's clock and toggles")}
	case o.idleCrash < 0:
		return usageError{fmt.Errorf("--idle-crash %s: want a positive duration, or 0 for never", o.idleCrash)}
	}
	return nil
}

// sharedRoom is the room of serve --shared and what it owns.
type sharedRoom struct {
	room    *room.Room
	sc      *engine.Scenario
	dir     string // the temporary folder of its database ("" with --db)
	dbPath  string
	dbNote  string // how the database is kept: "kept", or a PostgreSQL schema of its own, dropped at exit
	cleanup func()
}

// openSharedRoom loads the scenario and opens the room's first round on its database.
func openSharedRoom(ctx context.Context, b Backends, o serveOptions) (*sharedRoom, error) {
	so := o.shared
	sc, err := loadScenario(b, so.scenario, &so.flags, so.fs)
	if err != nil {
		return nil, err
	}
	if sc.Messages > sharedMaxMessages {
		return nil, usageError{fmt.Errorf("--shared %s: %d messages, more than the %d a room holds (every screen reads every row)", sc.Name, sc.Messages, sharedMaxMessages)}
	}
	sr := &sharedRoom{sc: sc, dbPath: so.flags.db}
	if sr.dbPath == "" {
		if sr.dir, err = os.MkdirTemp("", runFolderPrefix(os.Getpid())); err != nil {
			return nil, fmt.Errorf("temporary folder: %w", err)
		}
		sr.dbPath = filepath.Join(sr.dir, "room.db")
	}
	dbs := &dbOpener{b: b, path: sr.dbPath, reset: so.flags.reset, fair: !b.isServer(sr.dbPath), notes: so.flags.notes}
	if err := dbs.check(ctx); err != nil {
		sr.removeDir()
		return nil, err
	}
	var last func()
	closeLast := func() error {
		if last != nil {
			last()
			last = nil
		}
		return nil
	}
	open := func(ctx context.Context) (*engine.Session, error) {
		closeLast()
		db, note, cleanup, err := dbs.open(ctx)
		if err != nil {
			return nil, err
		}
		sess, err := engine.NewSession(ctx, room.ForRoom(sc), db)
		if err != nil {
			db.Close()
			cleanup()
			return nil, err
		}
		last = func() { sess.Close(); db.Close(); cleanup() }
		sr.dbPath, sr.dbNote = db.Path(), note
		return sess, nil
	}
	sr.room, err = room.New(ctx, room.Config{Open: open, Close: closeLast, Questions: room.QuestionsOf(sc),
		MaxSeats: max(room.DefaultMaxSeats, 2*o.maxSessions)})
	if err != nil {
		sr.removeDir()
		return nil, err
	}
	sr.cleanup = func() { sr.room.Close(); sr.removeDir() }
	return sr, nil
}

func (sr *sharedRoom) removeDir() {
	if sr.dir != "" {
		os.RemoveAll(sr.dir)
	}
}

// sharedServerConfig is the server of the shared room sr.
func sharedServerConfig(sr *sharedRoom, key gossh.Signer, o serveOptions, connect string, log io.Writer) (serve.Config, error) {
	dir := o.handouts
	if dir == "" {
		var err error
		if dir, err = os.Getwd(); err != nil {
			return serve.Config{}, fmt.Errorf("the folder for the room's transcripts: %w", err)
		}
	}
	return serve.Config{
		HostKey: key, Theme: o.theme, MaxSessions: o.maxSessions, Idle: o.idle, TeacherKeys: o.teachers, Handshake: o.handshake, MaxPending: o.maxPending,
		Start: sr.sc.Name, Scenarios: []string{sr.sc.Name}, Connect: connect, Log: log,
		Shared: &serve.Shared{Room: sr.room, IdleCrash: o.shared.idleCrash, Transcripts: dir, Files: ui.OSFiles{}},
	}, nil
}

// cmdServeShared is serve --shared.
func cmdServeShared(ctx context.Context, b Backends, o serveOptions, key gossh.Signer, created bool, stdout, stderr io.Writer) error {
	sr, err := openSharedRoom(ctx, b, o)
	if err != nil {
		return err
	}
	defer sr.cleanup()
	var cfg serve.Config
	srv, ln, err := listenServer(o, func(connect string) (*serve.Server, error) {
		if cfg, err = sharedServerConfig(sr, key, o, connect, stderr); err != nil {
			return nil, err
		}
		return serve.New(cfg)
	})
	if err != nil {
		return err
	}
	connect := connectLine(ln.Addr())
	fmt.Fprintf(stdout, "leaselab serve: the shared room on %s (%d messages), listening on %s (up to %d attendees)\n",
		sr.sc.Name, sr.sc.Messages, ln.Addr(), o.maxSessions)
	fmt.Fprintf(stdout, "the room's database: %s\n", sr.dbPath)
	fmt.Fprintln(stdout, hostKeyLine(o.hostKey, key, created))
	fmt.Fprintf(stdout, "the teacher's screen:  %s  with a key of %s (%d keys); w writes transcripts into %s\n",
		connect, o.teacherKey, len(o.teachers), cfg.Shared.Transcripts)
	fmt.Fprintf(stdout, "attendees type:  %s   (their SSH user names their worker: %s)\n", connect, userAt(connect, "ana"))
	if err := serveUntilStopped(ctx, srv, ln, func() {
		fmt.Fprintf(stdout, "leaselab serve: stopping; %d attendees connected …\n", len(srv.Sessions()))
	}); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "leaselab serve: stopped; the room is closed, its workers stopped and its database %s\n", sr.afterWords())
	return nil
}

// userAt is the connect line with user@ before its host.
func userAt(connect, user string) string {
	i := len(connect) - 1
	for i >= 0 && connect[i] != ' ' {
		i--
	}
	return connect[:i+1] + user + "@" + connect[i+1:]
}

// afterWords says what became of the room's database at the end.
func (sr *sharedRoom) afterWords() string {
	switch {
	case sr.dir != "":
		return "removed"
	case strings.Contains(sr.dbNote, "dropped"):
		return "dropped"
	}
	return "kept"
}
