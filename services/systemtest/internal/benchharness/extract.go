package benchharness

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime/pprof"
	"sync/atomic"
	"time"

	"github.com/docintake/docintake/pkg/opentrans"
	"github.com/docintake/docintake/pkg/pdftext"
	"github.com/docintake/docintake/pkg/template"
)

// extraction measures phase 3 in this process, one document at a time: the
// processor's engine as the processor configures it by default (text,
// template, openTRANS XML) against `pdftotext -layout` alone on the same
// files. With ProfileDir set the engine's loop is CPU-profiled.
func (h *harness) extraction(ctx context.Context) error {
	// The processor's default engine: auto, which prefers the resident
	// helper the processor finds next to its binary.
	opts := pdftext.DefaultOptions()
	opts.ResidentBin = filepath.Join(h.sys.binDir, pdftext.ResidentBinary)
	eng, err := pdftext.New(opts)
	if err != nil {
		return err
	}
	defer eng.Close()
	set, err := template.Load(h.corpus.templatesDir)
	if err != nil {
		return err
	}
	dir, err := os.MkdirTemp("", "bench-extract-*")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	files := make([]string, len(h.corpus.orders))
	for i, o := range h.corpus.orders {
		files[i] = filepath.Join(dir, fmt.Sprintf("%d.pdf", i))
		if err := os.WriteFile(files[i], o.data, 0o600); err != nil {
			return err
		}
	}
	pdftotext, _ := exec.LookPath("pdftotext")

	// Engine and pdftotext alternate per file, so that a busy moment of a
	// shared machine hits both sides alike.
	var engine, text, rest, plain []time.Duration
	var done atomic.Int64 // the progress line runs on its own goroutine
	h.prog.set(func() string {
		return fmt.Sprintf("extraction: %d of %d documents", done.Load(), h.opts.ExtractRounds*len(h.corpus.orders))
	})
	stopCPU := func() {}
	if h.opts.ProfileDir != "" {
		f, err := os.Create(filepath.Join(h.opts.ProfileDir, "extraction.cpu.pprof"))
		if err == nil && pprof.StartCPUProfile(f) == nil {
			stopCPU = func() { pprof.StopCPUProfile(); f.Close() }
		}
	}
	defer stopCPU()
	for range h.opts.ExtractRounds {
		for i, o := range h.corpus.orders {
			t0 := time.Now()
			txt, err := eng.Extract(ctx, o.data)
			if err != nil {
				return fmt.Errorf("%s: %w", o.name, err)
			}
			t1 := time.Now()
			run, err := set.Run(ctx, txt.String(), template.RunOptions{Template: h.corpus.template})
			if err != nil {
				return fmt.Errorf("%s: %w", o.name, err)
			}
			if run.Outcome.Status != template.OutcomeSuccess {
				return fmt.Errorf("%s: outcome %s (%s), want success", o.name, run.Outcome.Status, run.Outcome.Detail)
			}
			if _, err := opentrans.Marshal(run.Order, opentrans.WriteOptions{GenerationTime: time.Now()}); err != nil {
				return fmt.Errorf("%s: %w", o.name, err)
			}
			t2 := time.Now()
			engine, text, rest = append(engine, t2.Sub(t0)), append(text, t1.Sub(t0)), append(rest, t2.Sub(t1))
			done.Add(1)
			if pdftotext != "" {
				if out, err := exec.CommandContext(ctx, pdftotext, "-layout", files[i], "-").Output(); err != nil {
					return fmt.Errorf("pdftotext %s: %w (%d bytes out)", files[i], err, len(out))
				}
				plain = append(plain, time.Since(t2))
			}
		}
	}
	x := Extraction{Documents: len(h.corpus.orders), Rounds: h.opts.ExtractRounds, Engine: eng.Name(),
		EngineMedian: quantile(engine, 0.5), TextMedian: quantile(text, 0.5), TemplateMedian: quantile(rest, 0.5),
		PdftotextMedian: quantile(plain, 0.5)}
	h.rep.Extraction = x
	h.logf("extraction: engine %s median %s/document (text %s, template + XML %s), pdftotext -layout alone %s", x.Engine,
		ms(x.EngineMedian), ms(x.TextMedian), ms(x.TemplateMedian), ms(x.PdftotextMedian))
	return nil
}
