package benchharness

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"
)

// procStatusKiB reads one "kB" field (VmRSS, VmHWM) of /proc/PID/status;
// 0 when it cannot.
func procStatusKiB(pid int, field string) int64 {
	if pid == 0 {
		return 0
	}
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if f := strings.Fields(line); len(f) >= 2 && f[0] == field+":" {
			kb, _ := strconv.ParseInt(f[1], 10, 64)
			return kb
		}
	}
	return 0
}

// resetPeakRSS sets a process's VmHWM back to its current RSS (Linux
// clear_refs value 5), so the next read is the peak of what follows.
func resetPeakRSS(pid int) error {
	return os.WriteFile(fmt.Sprintf("/proc/%d/clear_refs", pid), []byte("5"), 0)
}

// peakRSS records every process's VmHWM, read before teardown. PostgreSQL
// is left out: it is one process per connection, so no single figure is
// its peak.
func (h *harness) peakRSS() {
	m := &h.rep.Memory
	for _, s := range h.sys.services() {
		kb := procStatusKiB(s.p.PID(), "VmHWM")
		if s == h.sys.ingest {
			kb = max(kb, m.IngestPeakBeforeBig)
		}
		m.Peak = append(m.Peak, NamedKiB{s.p.Name, kb})
	}
	for _, p := range []struct {
		name string
		pid  int
	}{{"nats-server", h.sys.nats.PID()}, {"versitygw", h.sys.s3.PID()}} {
		m.Peak = append(m.Peak, NamedKiB{p.name, procStatusKiB(p.pid, "VmHWM")})
	}
}

// profiles fetches pprof profiles from services (all when none are named)
// into ProfileDir: kind "profile" is a CPU profile over d, fetched in the
// background (the returned func waits for it); other kinds ("allocs") are
// fetched at once. Services that do not serve pprof are skipped with a
// log line. Without ProfileDir it does nothing.
func (h *harness) profiles(ctx context.Context, kind, label string, d time.Duration, svcs ...*service) (wait func()) {
	if h.opts.ProfileDir == "" {
		return func() {}
	}
	if len(svcs) == 0 {
		svcs = h.sys.services()
	}
	var wg sync.WaitGroup
	for _, s := range svcs {
		if s == nil || s.pprofAddr == "" {
			continue
		}
		url := fmt.Sprintf("http://%s/debug/pprof/%s", s.pprofAddr, kind)
		if kind == "profile" {
			url += fmt.Sprintf("?seconds=%d", max(1, int(d.Seconds())))
		}
		file := filepath.Join(h.opts.ProfileDir, fmt.Sprintf("%s-%s.%s.pprof", s.p.Name, label, kind))
		wg.Go(func() {
			if err := fetch(ctx, url, file); err != nil {
				h.logf("pprof %s of %s: %v", kind, s.p.Name, err)
			}
		})
	}
	if kind != "profile" {
		wg.Wait()
	}
	return wg.Wait
}

func fetch(ctx context.Context, url, file string) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return err
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer res.Body.Close()
	if res.StatusCode != http.StatusOK {
		return fmt.Errorf("%s: status %d", url, res.StatusCode)
	}
	f, err := os.Create(file)
	if err != nil {
		return err
	}
	if _, err := io.Copy(f, res.Body); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

func mib(kb int64) string {
	if kb == 0 {
		return "n/a"
	}
	return fmt.Sprintf("%.0f MiB", float64(kb)/1024)
}
