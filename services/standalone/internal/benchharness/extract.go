package benchharness

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime/pprof"
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
	eng, err := pdftext.New(pdftext.DefaultOptions())
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

	var engine, plain []time.Duration
	h.prog.set(func() string {
		return fmt.Sprintf("extraction: %d of %d documents", len(engine), h.opts.ExtractRounds*len(h.corpus.orders))
	})
	stopCPU := func() {}
	if h.opts.ProfileDir != "" {
		f, err := os.Create(filepath.Join(h.opts.ProfileDir, "extraction.cpu.pprof"))
		if err == nil && pprof.StartCPUProfile(f) == nil {
			stopCPU = func() { pprof.StopCPUProfile(); f.Close() }
		}
	}
	for range h.opts.ExtractRounds {
		for _, o := range h.corpus.orders {
			t0 := time.Now()
			text, err := eng.Extract(ctx, o.data)
			if err != nil {
				stopCPU()
				return fmt.Errorf("%s: %w", o.name, err)
			}
			run, err := set.Run(ctx, text.String(), template.RunOptions{Template: h.corpus.template})
			if err != nil {
				stopCPU()
				return fmt.Errorf("%s: %w", o.name, err)
			}
			if run.Outcome.Status != template.OutcomeSuccess {
				stopCPU()
				return fmt.Errorf("%s: outcome %s (%s), want success", o.name, run.Outcome.Status, run.Outcome.Detail)
			}
			if _, err := opentrans.Marshal(run.Order, opentrans.WriteOptions{GenerationTime: time.Now()}); err != nil {
				stopCPU()
				return fmt.Errorf("%s: %w", o.name, err)
			}
			engine = append(engine, time.Since(t0))
		}
	}
	stopCPU()
	if pdftotext != "" {
		for range h.opts.ExtractRounds {
			for _, f := range files {
				t0 := time.Now()
				if out, err := exec.CommandContext(ctx, pdftotext, "-layout", f, "-").Output(); err != nil {
					return fmt.Errorf("pdftotext %s: %w (%d bytes out)", f, err, len(out))
				}
				plain = append(plain, time.Since(t0))
			}
		}
	}
	x := Extraction{Documents: len(h.corpus.orders), Rounds: h.opts.ExtractRounds, Engine: eng.Name(),
		EngineMedian: quantile(engine, 0.5), PdftotextMedian: quantile(plain, 0.5)}
	h.rep.Extraction = x
	h.logf("extraction: engine %s median %s/document, pdftotext -layout alone %s", x.Engine, ms(x.EngineMedian), ms(x.PdftotextMedian))
	return nil
}
