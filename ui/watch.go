package ui

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/charmbracelet/bubbles/help"
	tea "github.com/charmbracelet/bubbletea"

	"leaselab/engine"
	"leaselab/ui/common"
	"leaselab/ui/outbox"
	"leaselab/ui/pace"
)

// The watch is the lab, read-only, on a database that other processes work on (leaselab worker
// in other terminals): no session, no workers of its own. It polls the outbox on a tick, in a
// tea.Cmd, and shows it with the lab's table and styles, the lease bars against the wall clock.

// defaultWatchEvery is how often the watch reads the database unless told otherwise.
const defaultWatchEvery = 200 * time.Millisecond

// WatchDB is what the watch reads. store.DB satisfies it.
type WatchDB interface {
	// Snapshot reads every outbox row with its payment, ordered by Id.
	Snapshot(ctx context.Context) ([]engine.Row, error)
	// Counts reads the outbox and payment figures.
	Counts(ctx context.Context) (engine.Counts, error)
}

// WatchConfig is what the watch needs from the command line.
type WatchConfig struct {
	DB WatchDB
	// Path is the database file, as the header shows it.
	Path string
	// Interval is the time between two reads of the database (0: 200 ms).
	Interval time.Duration
	// Now is the wall clock the leases are measured against (nil: time.Now).
	Now func() time.Time
	// Theme names the style set (common.Theme): "" or "default", "projector".
	Theme string
	In    io.Reader
	Out   io.Writer
}

// Watch shows the database on cfg.In and cfg.Out until the user quits or ctx ends.
func Watch(ctx context.Context, cfg WatchConfig) error {
	p, err := NewWatch(ctx, cfg, Terminal{In: cfg.In, Out: cfg.Out, Theme: cfg.Theme})
	if err != nil {
		return err
	}
	return p.Run()
}

// watchTick asks for the next read of the database; watchedMsg carries what it read. id names
// the poll loop: pausing and resuming begin a new one, so a stale tick or result is dropped.
type (
	watchTick  struct{ id int }
	watchedMsg struct {
		id     int
		at     time.Time // the wall clock when the rows were read
		rows   []engine.Row
		counts engine.Counts
		err    error
	}
)

// watchModel is the watch's Bubble Tea model. Every read of the database happens in a tea.Cmd.
type watchModel struct {
	cfg    WatchConfig
	ctx    context.Context
	after  pace.After
	keys   WatchKeyMap
	styles common.Styles
	help   help.Model

	width, height int // 0 until the first WindowSizeMsg
	layout        watchLayout

	id       int  // the poll loop's id
	paused   bool // p: no polling
	polls    int  // reads taken
	frame    *common.Frame
	counts   engine.Counts
	changes  common.Changes
	holders  []holder
	rate     rateMeter
	lease    time.Duration // the longest lease seen: the bars' full length
	status   common.Status
	showHelp bool
	quitting bool
	outbox   outbox.Pane
	panes    paneSet   // the registered panes the watch shows (panes.go)
	recent   recentLog // what successive reads showed, for a few seconds
}

func newWatch(ctx context.Context, cfg WatchConfig, st common.Styles) watchModel {
	if cfg.Interval <= 0 {
		cfg.Interval = defaultWatchEvery
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	m := watchModel{cfg: cfg, ctx: ctx, after: pace.RealAfter, keys: DefaultWatchKeyMap(), styles: st, help: help.New(), outbox: outbox.New(),
		panes: panesOf(registry(), false),
		id:    1, status: common.Status{Text: "reading " + cfg.Path + " …"}}
	m.help.Styles = st.Help
	m.changes = common.NoChanges(nil)
	m.relayout()
	return m
}

// Init reads the database for the first time.
func (m watchModel) Init() tea.Cmd { return m.pollCmd(m.id) }

// pollCmd reads the outbox and the counts.
func (m watchModel) pollCmd(id int) tea.Cmd {
	ctx, db, now := m.ctx, m.cfg.DB, m.cfg.Now
	return func() tea.Msg {
		rows, err := db.Snapshot(ctx)
		if err != nil {
			return watchedMsg{id: id, err: err}
		}
		at := now()
		c, err := db.Counts(ctx)
		return watchedMsg{id: id, at: at, rows: rows, counts: c, err: err}
	}
}

// Update handles one message.
func (m watchModel) Update(msg tea.Msg) (tea.Model, tea.Cmd) { return m.update(msg) }

func (m watchModel) update(msg tea.Msg) (watchModel, tea.Cmd) {
	switch msg := msg.(type) {
	case tea.KeyMsg:
		return m.key(msg)
	case tea.WindowSizeMsg:
		m.width, m.height, _ = FitWindow(msg.Width, msg.Height)
		m.relayout()
	case watchTick:
		if msg.id != m.id || m.paused {
			return m, nil
		}
		return m, m.pollCmd(msg.id)
	case watchedMsg:
		if msg.id != m.id || m.paused {
			return m, nil // a read of a loop that has been paused since
		}
		m = m.took(msg)
		return m, m.after(m.cfg.Interval, watchTick{id: m.id})
	default: // a message of a registered pane's own
		var outs []tea.Msg
		m.panes, outs = m.panes.broadcast(msg, m.scene())
		return takeAll(m, outs, watchModel.take)
	}
	return m, nil
}

// take carries out what a registered pane asked for; the watch runs no engine command.
func (m watchModel) take(out tea.Msg) (watchModel, tea.Cmd) { return m, takeNote(out, &m.status) }

// scene is what the panes draw from now.
func (m watchModel) scene() common.Scene {
	return common.Scene{Frame: m.frame, Changes: m.changes, Styles: &m.styles}
}

// key handles a key; several runes in one message count as several presses.
func (m watchModel) key(k tea.KeyMsg) (watchModel, tea.Cmd) {
	if k.Paste || m.quitting {
		return m, nil
	}
	if mm, cmd, ok := pressEach(m, k, watchModel.key, func(m watchModel) bool { return m.quitting }); ok {
		return mm, cmd
	}
	if p, _, ok := m.outbox.Update(k); ok {
		m.outbox = p
		if m.followWork(); m.outbox.Scrolled {
			m.status = common.Status{Text: "scrolled: the table stays here until you scroll back to the rows being processed"}
		} else {
			m.status = common.Status{Text: "following the work: the rows being processed stay in view"}
		}
		m.keys.Close.SetEnabled(m.showHelp)
		return m, nil
	}
	if set, out, ok := m.panes.key(k, m.scene()); ok {
		m.panes = set
		return m.take(out)
	}
	switch act := m.keys.match(k); act {
	case actQuit:
		m.quitting = true
		return m, tea.Quit
	case actPlay:
		m.paused = !m.paused
		m.id++ // the loop in flight is dropped; resuming starts a new one
		if m.paused {
			m.status = common.Status{Text: "polling paused: the screen holds the last read (" + common.KeyName(m.keys.Pause) + " resumes)"}
			return m, nil
		}
		m.status = common.Status{Text: "polling again every " + m.cfg.Interval.String()}
		return m, m.pollCmd(m.id)
	case actHelp:
		m.showHelp = !m.showHelp
		m.relayout()
	case actClose:
		m.showHelp = false
		m.relayout()
	}
	m.keys.Close.SetEnabled(m.showHelp)
	return m, nil
}

// took takes one read of the database: the frame, the holders, the rate and the lease scale.
func (m watchModel) took(msg watchedMsg) watchModel {
	if msg.err != nil {
		m.status = common.Status{Text: fmt.Sprintf("could not read the database (trying again every %s): %v", m.cfg.Interval, msg.err), Level: common.LevelError}
		return m
	}
	if m.status.Level == common.LevelError || m.polls == 0 {
		m.status = common.Status{Text: fmt.Sprintf("watching: other processes do the work; this screen only reads (%s pauses, %s quits)",
			common.KeyName(m.keys.Pause), common.KeyName(m.keys.Quit))}
	}
	m.polls++
	for i := range msg.rows {
		r := &msg.rows[i]
		if r.Status == engine.StatusProcessing && r.LockedUntil.After(msg.at) {
			// A lease first seen just after its claim shows nearly its whole length: the
			// longest time left seen is the bars' scale (the watch cannot know the workers'
			// --lease).
			m.lease = max(m.lease, r.LockedUntil.Sub(msg.at))
		}
	}
	rows := common.SafeRows(msg.rows) // any process can write these values: shown escaped
	m.holders = holdersOf(rows, msg.at)
	f := &common.Frame{Frame: engine.Frame{Name: "watch", Title: "WATCH (read-only)", DBPath: m.cfg.Path, Now: msg.at, Rows: rows}, Watch: true}
	f.Settings.Lease = m.lease
	for _, h := range m.holders {
		f.Workers = append(f.Workers, engine.WorkerView{Name: h.name, ID: h.name})
	}
	m.changes = common.Diff(m.frame, f)
	if m.frame != nil {
		m.recent.add(msg.at, happenings(m.frame.Rows, f.Rows, m.frame.Now, msg.at))
	}
	m.frame, m.counts = f, msg.counts
	m.rate.add(msg.at, msg.counts.OutboxProcessed, msg.counts.Messages)
	m.relayout()
	m.followWork()
	return m
}

// followWork keeps the rows being worked on in view, unless the user scrolled away.
func (m *watchModel) followWork() {
	if m.frame != nil {
		m.outbox.FollowSpan(workSpan(m.frame.Rows))
	}
}
