package mailintake

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"time"

	"github.com/docintake/docintake/pkg/mailbox"
	"github.com/docintake/docintake/pkg/store"
	"go.uber.org/zap"
)

// supervisor runs a poller per mailbox of Deps.Load and follows the
// table: every PollInterval it reloads, stops the pollers of removed or
// changed mailboxes (which releases their locks) and starts the new ones,
// so `intakectl mailboxes add|remove` needs no restart.
type supervisor struct {
	d       Deps
	m       *metrics
	h       *health
	running map[string]*running
	stopped chan error // a poller's errStop (a test hook), which ends Run
}

type running struct {
	mb     mailbox.Mailbox
	cancel context.CancelFunc
	done   chan struct{}
}

// supervise runs until ctx is done or a poller is stopped by a hook.
func supervise(ctx context.Context, d Deps, m *metrics, h *health) error {
	s := &supervisor{d: d, m: m, h: h, running: map[string]*running{}, stopped: make(chan error, 1)}
	defer s.stopAll()
	t := time.NewTimer(0)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case err := <-s.stopped:
			return err
		case <-t.C:
			s.reload(ctx)
			t.Reset(d.Tuning.PollInterval)
		}
	}
}

// reload brings the running pollers in line with the table. When the table
// cannot be read the running ones go on as they are.
func (s *supervisor) reload(ctx context.Context) {
	boxes, err := s.d.Load(ctx)
	if err != nil {
		s.d.Logger.Warn("reading the mailboxes", zap.Error(err))
		if !errors.Is(err, errBadEntry) {
			return
		}
	}
	want := make(map[string]mailbox.Mailbox, len(boxes))
	for _, mb := range boxes {
		want[mb.ID] = mb
	}
	for id, r := range s.running {
		if mb, ok := want[id]; !ok {
			s.stop(id, "removed")
		} else if !reflect.DeepEqual(mb, r.mb) {
			s.stop(id, "changed")
		}
	}
	for id, mb := range want {
		if _, ok := s.running[id]; !ok {
			s.start(ctx, mb)
		}
	}
}

func (s *supervisor) start(ctx context.Context, mb mailbox.Mailbox) {
	ctx, cancel := context.WithCancel(ctx)
	r := &running{mb: mb, cancel: cancel, done: make(chan struct{})}
	p := newPoller(s.d, mb, s.m, s.h)
	go func() {
		defer close(r.done)
		if err := p.run(ctx); err != nil {
			select {
			case s.stopped <- err:
			default:
			}
		}
	}()
	s.running[mb.ID] = r
	p.log.Info("mailbox configured: polling")
}

// stop ends a poller and waits for it, so that its lock is free for the
// poller that replaces it.
func (s *supervisor) stop(id, why string) {
	r := s.running[id]
	r.cancel()
	<-r.done
	delete(s.running, id)
	s.h.forget(id)
	s.d.Logger.Info("mailbox poller stopped", zap.String("mailbox", id), zap.String("why", why))
}

func (s *supervisor) stopAll() {
	for id := range s.running {
		s.stop(id, "shutdown")
	}
}

// newPoller makes mb's poller, its reader counting into m.
func newPoller(d Deps, mb mailbox.Mailbox, m *metrics, h *health) *poller {
	rd := mailbox.NewReader(mailbox.Deps{Store: d.Store, Intake: d.Intake, Logger: d.Logger, Getenv: d.Getenv,
		Tuning: d.Tuning.Read, Counter: m, BeforeMove: stopBeforeMove(d.Hooks.BeforeMove)}, mb)
	log := rd.Logger()
	return &poller{d: d, mb: mb, metrics: m, log: log, rd: rd, hl: h.of(mb, log)}
}

// stopBeforeMove makes the test hook's error end Run, as a crash would.
func stopBeforeMove(hook func(mailboxID string, uid uint32) error) func(string, uint32) error {
	if hook == nil {
		return nil
	}
	return func(id string, uid uint32) error {
		if err := hook(id, uid); err != nil {
			return fmt.Errorf("%w: %w", errStop, err)
		}
		return nil
	}
}

// errBadEntry marks a stored mailbox this release cannot read: the others
// are still read.
var errBadEntry = errors.New("unreadable mailbox")

// StoredMailboxes returns a Deps.Load that reads the mailboxes table
// (mailbox.ApplyMailboxes and `intakectl mailboxes add|remove` write it). A row this
// release cannot read is reported in the error while the others are still
// returned, so one bad entry stops only its own mailbox.
func StoredMailboxes(st *store.Store) func(context.Context) ([]mailbox.Mailbox, error) {
	return func(ctx context.Context) ([]mailbox.Mailbox, error) {
		rows, err := st.MailboxConfigs(ctx)
		if err != nil {
			return nil, err
		}
		var boxes []mailbox.Mailbox
		var errs []error
		for _, r := range rows {
			m, err := mailbox.DecodeMailbox(r.Config)
			if err != nil {
				errs = append(errs, fmt.Errorf("%w %s: %w", errBadEntry, r.ID, err))
				continue
			}
			boxes = append(boxes, m)
		}
		return boxes, errors.Join(errs...)
	}
}
