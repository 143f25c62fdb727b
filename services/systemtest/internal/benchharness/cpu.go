package benchharness

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"time"
)

// clockTicks is USER_HZ, the unit of /proc's CPU times (100 on every
// Linux architecture Go supports).
const clockTicks = 100

// cpuSample is the CPU time used so far by each component of the run (the
// harness, and each child process with all its descendants: PostgreSQL
// backends, pdftotext runs) and by the whole machine.
type cpuSample struct {
	at     time.Time
	byName map[string]float64 // seconds
	busy   float64            // machine: seconds of non-idle CPU, all processes
	iowait float64            // machine: seconds waiting for I/O
}

type procStat struct {
	ppid  int
	ticks float64 // utime+stime+cutime+cstime
	self  float64 // utime+stime
}

func readProcStat(pid string) (procStat, bool) {
	b, err := os.ReadFile(filepath.Join("/proc", pid, "stat"))
	if err != nil {
		return procStat{}, false
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return procStat{}, false
	}
	f := strings.Fields(s[i+1:]) // f[0] is field 3 (state)
	if len(f) < 15 {
		return procStat{}, false
	}
	num := func(k int) float64 { v, _ := strconv.ParseFloat(f[k-3], 64); return v }
	ppid, _ := strconv.Atoi(f[1])
	return procStat{ppid: ppid, ticks: num(14) + num(15) + num(16) + num(17), self: num(14) + num(15)}, true
}

// readProcStats reads /proc/PID/stat of every process on the host.
func readProcStats() map[int]procStat {
	stats := map[int]procStat{}
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if st, ok := readProcStat(e.Name()); ok {
			stats[pid] = st
		}
	}
	return stats
}

// sampleCPU attributes every descendant of this process to the child of
// the harness it descends from, named by names (pid → name).
func sampleCPU(names map[int]string) cpuSample {
	c := cpuSample{at: time.Now(), byName: map[string]float64{}}
	self := os.Getpid()
	stats := readProcStats()
	for pid, st := range stats {
		if pid == self {
			c.byName["harness"] += st.self / clockTicks
			continue
		}
		// Walk up to the harness's direct child.
		top, p := 0, pid
		for range 64 {
			ps, ok := stats[p]
			if !ok || p <= 1 {
				break
			}
			if ps.ppid == self {
				top = p
				break
			}
			p = ps.ppid
		}
		if top == 0 {
			continue
		}
		name, ok := names[top]
		if !ok {
			name = "other"
		}
		// A child's cutime holds its reaped children (exited backends,
		// finished pdftotext runs); live ones are added separately.
		c.byName[name] += st.ticks / clockTicks
	}
	if b, err := os.ReadFile("/proc/stat"); err == nil {
		line, _, _ := strings.Cut(string(b), "\n")
		f := strings.Fields(line)
		if len(f) >= 8 && f[0] == "cpu" {
			var total float64
			for _, v := range f[1:] {
				n, _ := strconv.ParseFloat(v, 64)
				total += n
			}
			idle, _ := strconv.ParseFloat(f[4], 64)
			io, _ := strconv.ParseFloat(f[5], 64)
			c.busy, c.iowait = (total-idle-io)/clockTicks, io/clockTicks
		}
	}
	return c
}

// cpuNames maps the pids of the run's children to component names.
func (h *harness) cpuNames() map[int]string {
	names := map[int]string{}
	for _, p := range h.sys.all {
		if pid := p.PID(); pid != 0 {
			names[pid] = p.Name
		}
	}
	return names
}

func (h *harness) sampleCPU() cpuSample {
	if h.sys == nil {
		return sampleCPU(nil)
	}
	return sampleCPU(h.cpuNames())
}

// CPUUse is the CPU each component used during a measurement, in cores
// (CPU seconds per second of wall time).
type CPUUse struct {
	Cores   []NamedCores
	Machine float64 // every process on the host, ours or not
	IOWait  float64
}

// NamedCores is one component's share.
type NamedCores struct {
	Name  string
	Cores float64
}

func cpuUse(a, b cpuSample) CPUUse {
	el := b.at.Sub(a.at).Seconds()
	if el <= 0 {
		return CPUUse{}
	}
	u := CPUUse{Machine: (b.busy - a.busy) / el, IOWait: (b.iowait - a.iowait) / el}
	for name, v := range b.byName {
		if d := (v - a.byName[name]) / el; d >= 0.005 {
			u.Cores = append(u.Cores, NamedCores{name, d})
		}
	}
	sort.Slice(u.Cores, func(i, j int) bool { return u.Cores[i].Cores > u.Cores[j].Cores })
	return u
}

func (u CPUUse) String() string {
	if u.Machine == 0 && len(u.Cores) == 0 {
		return "n/a"
	}
	var parts []string
	for _, c := range u.Cores {
		parts = append(parts, fmt.Sprintf("%s %.2f", c.Name, c.Cores))
	}
	var ours float64
	for _, c := range u.Cores {
		ours += c.Cores
	}
	return fmt.Sprintf("%s; machine busy %.2f of %d cores (other users %.2f), iowait %.2f", strings.Join(parts, ", "), u.Machine,
		numCPU(), max(u.Machine-ours, 0), u.IOWait)
}

func numCPU() int { return runtime.NumCPU() }

// msPerItem splits the CPU per item by component, in ms to two decimals
// (the cores of String are too coarse to compare one service's share
// between runs at a few hundred items per second).
func (u CPUUse) msPerItem(perSec float64) string {
	if perSec <= 0 {
		return "n/a"
	}
	var parts []string
	for _, c := range u.Cores {
		parts = append(parts, fmt.Sprintf("%s %.2f", c.Name, c.Cores/perSec*1000))
	}
	return strings.Join(parts, ", ") + " ms per item"
}
