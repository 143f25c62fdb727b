package pdftext

// keepSpare starts a helper in the background when the idle stack has run
// empty and the pool has reserve helpers (Options.Fair.Burst): a quiet
// tenant granted a reserve helper while another tenant's documents hold
// all the others finds it warm instead of waiting for a spawn, which takes
// most of a second on a busy machine (the sandbox's trampoline, poppler's
// libraries) and was most of that tenant's latency under load. At most
// one spare is started at a time, and no more helpers live than the gate
// has slots plus this one.
func (p *helperPool) keepSpare() {
	if p.opts.Fair.BurstOf(max(p.opts.Workers, 1)) == 0 {
		return
	}
	p.mu.Lock()
	if p.closed || p.starting || len(p.idle) > 0 {
		p.mu.Unlock()
		return
	}
	p.starting = true
	p.mu.Unlock()
	go func() {
		h, err := p.spawn()
		p.mu.Lock()
		defer p.mu.Unlock()
		p.starting = false
		if err != nil {
			return // the next acquire spawns on demand and reports it
		}
		if p.closed {
			go h.stop()
			return
		}
		p.idle = append(p.idle, h)
	}()
}
