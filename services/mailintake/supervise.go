package mailintake

import (
	"context"
	"errors"
	"reflect"
	"time"

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
	mb     Mailbox
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
	want := make(map[string]Mailbox, len(boxes))
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

func (s *supervisor) start(ctx context.Context, mb Mailbox) {
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

// newPoller makes mb's poller; h is nil for a command's (no health reports).
func newPoller(d Deps, mb Mailbox, m *metrics, h *health) *poller {
	log := d.Logger.With(zap.String("mailbox", mb.ID), zap.String("client", mb.Client))
	p := &poller{d: d, mb: mb, metrics: m, log: log}
	if h != nil {
		p.hl = h.of(mb, log)
	}
	return p
}
