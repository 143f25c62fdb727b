package benchharness

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// cpuGroups is a cgroup made for one run, with one child per CPU-limited
// process: the kernel's CFS bandwidth control gives each child a fixed CPU
// budget (quota per period), which is what a Kubernetes CPU limit sets on a
// container. cgroup v1 (a hierarchy with the cpu controller) is preferred
// where it is mounted, because on a hybrid host the cpu controller is bound
// there and the v2 tree (/sys/fs/cgroup/unified) has none; on a pure v2
// host the cpu controller of the v2 tree is used.
type cpuGroups struct {
	version int    // 1 or 2
	base    string // the cgroup the run's group was made in (processes go back here)
	dir     string // the run's group
	period  time.Duration
	groups  []*cpuGroup
}

// cpuGroup is one CPU-limited child.
type cpuGroup struct {
	name    string
	dir     string
	version int
	budget  float64 // cores: quota / period
	quota   time.Duration
}

// groupPrefix names the groups of runs; a group whose pid suffix is no
// longer alive is a leftover of a killed run and is removed by the next.
const groupPrefix = "docintake-bench-"

// cgroupMount is one cgroup hierarchy from /proc/self/mountinfo.
type cgroupMount struct {
	version int
	dir     string // mount point
}

// cpuMounts returns the hierarchies that can limit CPU: a v1 hierarchy
// with the cpu controller first, then a v2 tree whose root offers cpu.
func cpuMounts() ([]cgroupMount, error) {
	f, err := os.Open("/proc/self/mountinfo")
	if err != nil {
		return nil, fmt.Errorf("mountinfo: %w", err)
	}
	defer f.Close()
	var v1, v2 []cgroupMount
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		// "36 35 0:30 / /sys/fs/cgroup/cpu rw,relatime shared:9 - cgroup cgroup rw,cpu"
		pre, post, ok := strings.Cut(sc.Text(), " - ")
		if !ok {
			continue
		}
		pf, qf := strings.Fields(pre), strings.Fields(post)
		if len(pf) < 5 || len(qf) < 3 {
			continue
		}
		switch qf[0] {
		case "cgroup":
			if slices.Contains(strings.Split(qf[2], ","), "cpu") {
				v1 = append(v1, cgroupMount{1, pf[4]})
			}
		case "cgroup2":
			b, err := os.ReadFile(filepath.Join(pf[4], "cgroup.controllers"))
			if err == nil && slices.Contains(strings.Fields(string(b)), "cpu") {
				v2 = append(v2, cgroupMount{2, pf[4]})
			}
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("mountinfo: %w", err)
	}
	return append(v1, v2...), nil
}

// newCPUGroups makes the run's group, trying each hierarchy that can
// limit CPU. The error says why none could be used (no cpu controller,
// read-only cgroup file system, not root).
func newCPUGroups() (*cpuGroups, error) {
	mounts, err := cpuMounts()
	if err != nil {
		return nil, err
	}
	if len(mounts) == 0 {
		return nil, errors.New("no cgroup hierarchy with the cpu controller (neither a v1 cpu mount nor a v2 tree offering cpu)")
	}
	var errs []error
	for _, m := range mounts {
		g, err := makeCPUGroups(m)
		if err == nil {
			return g, nil
		}
		errs = append(errs, fmt.Errorf("cgroup v%d at %s: %w", m.version, m.dir, err))
	}
	return nil, errors.Join(errs...)
}

func makeCPUGroups(m cgroupMount) (*cpuGroups, error) {
	removeStaleGroups(m)
	c := &cpuGroups{version: m.version, base: m.dir, dir: filepath.Join(m.dir, groupPrefix+strconv.Itoa(os.Getpid())), period: 100 * time.Millisecond}
	if m.version == 2 {
		// Children get the cpu controller only when their parent lists it
		// in cgroup.subtree_control; the v2 root may list it already.
		b, err := os.ReadFile(filepath.Join(m.dir, "cgroup.subtree_control"))
		if err != nil {
			return nil, err
		}
		if !slices.Contains(strings.Fields(string(b)), "cpu") {
			if err := writeFile(filepath.Join(m.dir, "cgroup.subtree_control"), "+cpu"); err != nil {
				return nil, fmt.Errorf("enable cpu for children: %w", err)
			}
		}
	}
	if err := os.Mkdir(c.dir, 0o755); err != nil {
		return nil, err
	}
	// The children's weights count only among themselves: the run's group
	// competes with the host's other processes with its own weight.
	if err := c.favour(c.dir); err != nil {
		_ = os.Remove(c.dir)
		return nil, err
	}
	if m.version == 2 {
		if err := writeFile(filepath.Join(c.dir, "cgroup.subtree_control"), "+cpu"); err != nil {
			_ = os.Remove(c.dir)
			return nil, fmt.Errorf("enable cpu for children: %w", err)
		}
	} else if b, err := os.ReadFile(filepath.Join(c.dir, "cpu.cfs_period_us")); err == nil {
		if us, err := strconv.Atoi(strings.TrimSpace(string(b))); err == nil && us > 0 {
			c.period = time.Duration(us) * time.Microsecond
		}
	}
	// A test group proves that a quota can be set before the run relies on it.
	probe, err := c.add("probe", 0.5)
	if err != nil {
		_ = c.remove()
		return nil, err
	}
	c.groups = nil
	if err := removeGroup(probe.dir, c.base); err != nil {
		_ = c.remove()
		return nil, err
	}
	return c, nil
}

// add makes a child group limited to budget cores. Its CPU weight is the
// highest the kernel allows, so that the budget is also granted when other
// users load the host: a Kubernetes pod with request = limit gets the same
// (a weight for its request, a quota for its limit). The quota keeps it from
// taking more than its budget.
func (c *cpuGroups) add(name string, budget float64) (*cpuGroup, error) {
	if budget <= 0 {
		return nil, fmt.Errorf("budget %.2f cores", budget)
	}
	g := &cpuGroup{name: name, dir: filepath.Join(c.dir, name), version: c.version, budget: budget,
		quota: time.Duration(budget * float64(c.period))}
	if err := os.Mkdir(g.dir, 0o755); err != nil {
		return nil, err
	}
	c.groups = append(c.groups, g)
	var err error
	if c.version == 1 {
		err = writeFile(filepath.Join(g.dir, "cpu.cfs_quota_us"), strconv.FormatInt(g.quota.Microseconds(), 10))
	} else {
		err = writeFile(filepath.Join(g.dir, "cpu.max"), fmt.Sprintf("%d %d", g.quota.Microseconds(), c.period.Microseconds()))
	}
	if err != nil {
		return nil, fmt.Errorf("cgroup %s: %w", g.dir, err)
	}
	return g, c.favour(g.dir)
}

// addFavoured makes a child group without a CPU limit but with the highest
// CPU weight: the system under test (servers, ingest, dispatcher, the
// harness) goes there so that on a host shared with other users its
// processes get a core whenever they are ready to run, and "cores free"
// means free for the pipeline, not left over by the neighbours.
func (c *cpuGroups) addFavoured(name string) (*cpuGroup, error) {
	g := &cpuGroup{name: name, dir: filepath.Join(c.dir, name), version: c.version}
	if err := os.Mkdir(g.dir, 0o755); err != nil {
		return nil, err
	}
	c.groups = append(c.groups, g)
	return g, c.favour(g.dir)
}

// favour gives the group at dir the highest CPU weight.
func (c *cpuGroups) favour(dir string) error {
	file, value := "cpu.shares", "262144"
	if c.version == 2 {
		file, value = "cpu.weight", "10000"
	}
	if err := writeFile(filepath.Join(dir, file), value); err != nil {
		return fmt.Errorf("cgroup %s: %w", dir, err)
	}
	return nil
}

// adopt moves the process pid and all its descendants into g. Children
// forked later are born in g; the second pass catches those forked while
// the first one ran.
func (g *cpuGroup) adopt(pid int) error {
	for range 2 {
		for _, p := range append([]int{pid}, descendants(pid)...) {
			if err := writeFile(g.procsFile(), strconv.Itoa(p)); err != nil && !errors.Is(err, syscall.ESRCH) {
				return fmt.Errorf("move %d into %s: %w", p, g.dir, err)
			}
		}
	}
	return nil
}

// descendants lists the processes below pid, from /proc.
func descendants(pid int) []int {
	children := map[int][]int{}
	for p, st := range readProcStats() {
		children[st.ppid] = append(children[st.ppid], p)
	}
	var out []int
	queue := []int{pid}
	for len(queue) > 0 {
		p := queue[0]
		queue = queue[1:]
		out = append(out, children[p]...)
		queue = append(queue, children[p]...)
	}
	return out
}

// procsFile is where a process writes its pid to join the group; its
// children (pdftotext runs, resident helpers) are then born inside.
func (g *cpuGroup) procsFile() string { return filepath.Join(g.dir, "cgroup.procs") }

// throttling is the CFS bandwidth counters of a group: how many periods
// it ran in, in how many it used up its quota and had to wait.
type throttling struct {
	periods, throttled int64
	waited             time.Duration
}

func (g *cpuGroup) throttling() (throttling, error) {
	b, err := os.ReadFile(filepath.Join(g.dir, "cpu.stat"))
	if err != nil {
		return throttling{}, err
	}
	var t throttling
	for _, line := range strings.Split(string(b), "\n") {
		k, v, _ := strings.Cut(line, " ")
		n, _ := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
		switch k {
		case "nr_periods":
			t.periods = n
		case "nr_throttled":
			t.throttled = n
		case "throttled_time": // v1, nanoseconds
			t.waited = time.Duration(n)
		case "throttled_usec": // v2
			t.waited = time.Duration(n) * time.Microsecond
		}
	}
	return t, nil
}

func (t throttling) sub(o throttling) throttling {
	return throttling{t.periods - o.periods, t.throttled - o.throttled, t.waited - o.waited}
}

// remove moves any process still in the run's groups back to the cgroup
// they came from and deletes the groups. It is safe to call twice.
func (c *cpuGroups) remove() error {
	var errs []error
	for _, g := range c.groups {
		if err := removeGroup(g.dir, c.base); err != nil {
			errs = append(errs, err)
		}
	}
	c.groups = nil
	if err := removeGroup(c.dir, c.base); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

// removeGroup empties dir into base and deletes it; a group that is gone
// already is not an error. The kernel refuses rmdir while a process that
// was just moved is still being accounted, hence the few retries.
func removeGroup(dir, base string) error {
	var err error
	for range 50 {
		if b, rerr := os.ReadFile(filepath.Join(dir, "cgroup.procs")); rerr == nil {
			for _, pid := range strings.Fields(string(b)) {
				_ = writeFile(filepath.Join(base, "cgroup.procs"), pid)
			}
		}
		err = os.Remove(dir)
		if err == nil || errors.Is(err, os.ErrNotExist) {
			return nil
		}
		if !errors.Is(err, syscall.EBUSY) {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	return fmt.Errorf("remove cgroup: %w", err)
}

// removeStaleGroups deletes the groups of runs whose process is gone (a
// run killed with SIGKILL cannot clean up after itself).
func removeStaleGroups(m cgroupMount) {
	entries, err := os.ReadDir(m.dir)
	if err != nil {
		return
	}
	for _, e := range entries {
		pid, err := strconv.Atoi(strings.TrimPrefix(e.Name(), groupPrefix))
		if !e.IsDir() || !strings.HasPrefix(e.Name(), groupPrefix) || err != nil || pid == os.Getpid() {
			continue
		}
		if _, err := os.Stat(fmt.Sprintf("/proc/%d", pid)); err == nil {
			continue // a run in progress
		}
		dir := filepath.Join(m.dir, e.Name())
		children, _ := os.ReadDir(dir)
		for _, ch := range children {
			if ch.IsDir() {
				_ = removeGroup(filepath.Join(dir, ch.Name()), m.dir)
			}
		}
		_ = removeGroup(dir, m.dir)
	}
}

// writeFile writes one value to a cgroup file (which must exist: O_CREATE
// would hide a missing controller behind a new regular file).
func writeFile(path, value string) error {
	f, err := os.OpenFile(path, os.O_WRONLY, 0)
	if err != nil {
		return err
	}
	if _, err := f.WriteString(value); err != nil {
		f.Close()
		return fmt.Errorf("write %q to %s: %w", value, path, err)
	}
	return f.Close()
}

// CPUBudgetSupport reports how the scaling phase would limit processors
// ("cgroup v1 at /sys/fs/cgroup/cpu") or why it cannot here. It makes and
// removes a probe group.
func CPUBudgetSupport() (string, error) {
	c, err := newCPUGroups()
	if err != nil {
		return "", err
	}
	desc := c.describe()
	return desc, c.remove()
}

func (c *cpuGroups) describe() string {
	return fmt.Sprintf("cgroup v%d at %s", c.version, c.base)
}
