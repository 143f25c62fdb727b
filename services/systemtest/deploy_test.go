package systemtest_test

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/compose-spec/compose-go/v2/cli"
	"github.com/compose-spec/compose-go/v2/types"
	"github.com/docintake/docintake/pkg/config"
	"github.com/docintake/docintake/pkg/mailbox"
	"github.com/docintake/docintake/pkg/repotest"
	"github.com/stretchr/testify/require"
	"gopkg.in/yaml.v3"
)

func loadCompose(t *testing.T) (*types.Project, string) {
	t.Helper()
	root := repotest.Root(t)
	opts, err := cli.NewProjectOptions([]string{filepath.Join(root, "docker-compose.yml")},
		cli.WithWorkingDirectory(root), cli.WithName("docintake"))
	require.NoError(t, err)
	project, err := opts.LoadProject(t.Context())
	require.NoError(t, err)
	return project, root
}

// serviceEnv returns a service's environment with compose's interpolation
// applied.
func serviceEnv(svc types.ServiceConfig) map[string]string {
	env := map[string]string{}
	for k, v := range svc.Environment {
		if v != nil {
			env[k] = *v
		}
	}
	return env
}

// No Docker engine runs here, so the compose file is checked the way compose
// itself reads it (compose-go), and its docintake services' environments are
// checked against the configuration they will be parsed with.
func TestComposeFile(t *testing.T) {
	t.Parallel()
	project, root := loadCompose(t)

	names := project.ServiceNames()
	for _, want := range []string{"postgres", "nats", "s3", "ingest", "processor", "dispatcher", "mailintake", "prometheus", "grafana"} {
		require.Contains(t, names, want)
	}
	known := map[string]bool{}
	for _, v := range config.Vars {
		known[v.Name] = true
	}
	for _, name := range dockerServices {
		svc := project.Services[name]
		env := serviceEnv(svc)
		for k := range env {
			if strings.HasPrefix(k, "INTAKE_") {
				require.True(t, known[k], "%s sets unknown variable %s", name, k)
			}
		}
		cfg, err := config.FromEnv(func(k string) string { return env[k] })
		require.NoError(t, err, name)
		require.NoError(t, cfg.RequireDatabase(), name)
		require.NotEmpty(t, cfg.S3.Endpoint, "%s needs S3: the filesystem store is for standalone only", name)
		require.Equal(t, "docintake:latest", svc.Image, name)
		require.GreaterOrEqual(t, *svc.StopGracePeriod, types.Duration(cfg.ShutdownTimeout),
			"%s: docker must wait at least INTAKE_SHUTDOWN_TIMEOUT before SIGKILL", name)
		if svc.Build != nil {
			_, err := os.Stat(filepath.Join(svc.Build.Context, svc.Build.Dockerfile))
			require.NoError(t, err, "Dockerfile of %s", name)
		}
	}
	ingestEnv := serviceEnv(project.Services["ingest"])
	require.NotEmpty(t, ingestEnv["INTAKE_OPS_TOKEN"], "the ops console is on in the compose setup")

	// Every bind mount exists in the repository.
	for name, svc := range project.Services {
		for _, vol := range svc.Volumes {
			if vol.Type == types.VolumeTypeBind {
				_, err := os.Stat(vol.Source)
				require.NoError(t, err, "%s mounts a missing file", name)
				require.True(t, vol.ReadOnly, "%s mounts %s writable", name, vol.Source)
			}
		}
	}

	// Health checks everywhere compose can run one, and start-up waits on
	// them.
	for _, name := range append([]string{"postgres", "nats", "prometheus", "grafana"}, dockerServices...) {
		hc := project.Services[name].HealthCheck
		require.NotNil(t, hc, "%s has no healthcheck", name)
		require.NotEmpty(t, hc.Test, name)
		require.False(t, hc.Disable, name)
	}
	for name, svc := range project.Services {
		for dep, d := range svc.DependsOn {
			if project.Services[dep].HealthCheck != nil {
				require.Equal(t, types.ServiceConditionHealthy, d.Condition, "%s should wait for %s to be healthy", name, dep)
			}
		}
	}

	proc := project.Services["processor"]
	require.NotNil(t, proc.Deploy)
	require.NotNil(t, proc.Deploy.Replicas)
	require.Equal(t, 2, *proc.Deploy.Replicas, "two processors share the durable consumer")
	require.Empty(t, proc.Ports, "replicas cannot share a host port")
	checkComposeMailintake(t, project)

	// Named volumes keep the state of the stateful services.
	for name, target := range map[string]string{"postgres": "/var/lib/postgresql/data", "nats": "/data", "s3": "/data",
		"prometheus": "/prometheus", "grafana": "/var/lib/grafana"} {
		require.True(t, slices.ContainsFunc(project.Services[name].Volumes, func(v types.ServiceVolumeConfig) bool {
			return v.Type == types.VolumeTypeVolume && v.Target == target
		}), "%s keeps %s in a named volume", name, target)
	}

	conf, err := os.ReadFile(filepath.Join(root, "deploy", "nats", "nats.conf"))
	require.NoError(t, err)
	require.Contains(t, string(conf), "sync_interval: always", "shipped NATS configs fsync before acking")
}

// dockerServices are the compose services that run a docintake binary.
var dockerServices = []string{"ingest", "processor", "dispatcher", "mailintake"}

// checkComposeMailintake: the mail intake applies a mounted mailboxes file
// that loads, reads its mailboxes' secrets from compose secrets whose files
// exist, and publishes no host port (it may be scaled out).
func checkComposeMailintake(t *testing.T, project *types.Project) {
	t.Helper()
	svc := project.Services["mailintake"]
	require.Equal(t, []string{"/usr/local/bin/mailintake"}, []string(svc.Entrypoint))
	require.Empty(t, svc.Ports, "replicas cannot share a host port")
	file := serviceEnv(svc)["INTAKE_MAILBOXES_FILE"]
	require.NotEmpty(t, file, "mailintake: INTAKE_MAILBOXES_FILE")
	_, err := mailbox.LoadMailboxes(mountSource(t, svc, file))
	require.NoError(t, err, "the mounted mailboxes file loads")
	require.NotEmpty(t, svc.Secrets, "the mailboxes' secrets are compose secrets")
	for _, s := range svc.Secrets {
		def, ok := project.Secrets[s.Source]
		require.True(t, ok, "mailintake uses undefined secret %s", s.Source)
		_, err := os.Stat(def.File)
		require.NoError(t, err, "secret %s's file", s.Source)
	}
}

// mountSource returns the host file mounted at target in svc.
func mountSource(t *testing.T, svc types.ServiceConfig, target string) string {
	t.Helper()
	for _, v := range svc.Volumes {
		if v.Target == target {
			return v.Source
		}
	}
	t.Fatalf("%s mounts nothing at %s", svc.Name, target)
	return ""
}

// The monitoring containers must find what the compose file mounts and
// scrape the ports the services listen on.
func TestComposeMonitoring(t *testing.T) {
	t.Parallel()
	project, _ := loadCompose(t)

	prom := project.Services["prometheus"]
	raw, err := os.ReadFile(mountSource(t, prom, "/etc/prometheus/prometheus.yml"))
	require.NoError(t, err)
	var pc struct {
		RuleFiles     []string `yaml:"rule_files"`
		ScrapeConfigs []struct {
			JobName       string `yaml:"job_name"`
			StaticConfigs []struct {
				Targets []string `yaml:"targets"`
			} `yaml:"static_configs"`
			DNSSDConfigs []struct {
				Names []string `yaml:"names"`
				Port  int      `yaml:"port"`
			} `yaml:"dns_sd_configs"`
		} `yaml:"scrape_configs"`
	}
	require.NoError(t, yaml.Unmarshal(raw, &pc))
	for _, rf := range pc.RuleFiles {
		mountSource(t, prom, rf) // every rule file is mounted
	}
	require.NotEmpty(t, pc.RuleFiles)
	targets := map[string]string{} // job → host:port
	for _, sc := range pc.ScrapeConfigs {
		for _, s := range sc.StaticConfigs {
			targets[sc.JobName] = s.Targets[0]
		}
		for _, d := range sc.DNSSDConfigs {
			targets[sc.JobName] = d.Names[0] + ":" + strconv.Itoa(d.Port)
		}
	}
	for _, svc := range dockerServices {
		job := "docintake-" + svc
		env := serviceEnv(project.Services[svc])
		cfg, err := config.FromEnv(func(k string) string { return env[k] })
		require.NoError(t, err)
		addr := cfg.MetricsAddr
		if svc == "ingest" {
			addr = cfg.HTTPAddr
		}
		_, port, err := net.SplitHostPort(addr)
		require.NoError(t, err)
		require.Equal(t, svc+":"+port, targets[job], "Prometheus job %s must scrape where %s listens", job, svc)
	}

	graf := project.Services["grafana"]
	prov := mountSource(t, graf, "/etc/grafana/provisioning")
	raw, err = os.ReadFile(filepath.Join(prov, "dashboards", "docintake.yml"))
	require.NoError(t, err)
	var dp struct {
		Providers []struct {
			Options struct {
				Path string `yaml:"path"`
			} `yaml:"options"`
		} `yaml:"providers"`
	}
	require.NoError(t, yaml.Unmarshal(raw, &dp))
	require.Len(t, dp.Providers, 1)
	dash := mountSource(t, graf, filepath.Join(dp.Providers[0].Options.Path, "docintake.json"))
	require.Equal(t, "docintake.json", filepath.Base(dash))
	raw, err = os.ReadFile(filepath.Join(prov, "datasources", "prometheus.yml"))
	require.NoError(t, err)
	require.Contains(t, string(raw), "url: http://prometheus:9090", "Grafana reads the compose Prometheus")
	require.Contains(t, string(raw), "uid: prometheus", "the dashboard's panels name this datasource uid")
}

// The docintake image has no curl, so its health checks speak HTTP through
// bash's /dev/tcp. Run them against a server that answers like /readyz.
func TestComposeHealthcheckCommands(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("bash"); err != nil {
		t.Skip("bash not installed")
	}
	project, _ := loadCompose(t)
	var ready atomic.Bool
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/readyz" || !ready.Load() {
			w.WriteHeader(http.StatusServiceUnavailable)
		}
	}))
	t.Cleanup(srv.Close)
	_, port, err := net.SplitHostPort(srv.Listener.Addr().String())
	require.NoError(t, err)

	for _, name := range dockerServices {
		test := project.Services[name].HealthCheck.Test
		require.Equal(t, "CMD", test[0], name)
		args := slices.Clone(test[1:])
		for i := range args { // the container's port → the test server's
			args[i] = strings.NewReplacer("127.0.0.1/8080", "127.0.0.1/"+port, "127.0.0.1/9090", "127.0.0.1/"+port).Replace(args[i])
		}
		run := func() error {
			ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
			defer cancel()
			return exec.CommandContext(ctx, args[0], args[1:]...).Run()
		}
		ready.Store(true)
		require.NoError(t, run(), "%s healthcheck against a ready server", name)
		ready.Store(false)
		require.Error(t, run(), "%s healthcheck against a 503", name)
	}
}
