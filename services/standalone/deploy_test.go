package standalone_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/compose-spec/compose-go/v2/cli"
	"github.com/docintake/docintake/pkg/config"
	"github.com/stretchr/testify/require"
)

// No Docker engine runs here, so the compose file is checked the way compose
// itself reads it (compose-go), and its docintake services' environments are
// checked against the configuration they will be parsed with.
func TestComposeFile(t *testing.T) {
	t.Parallel()
	root := repoRoot(t)
	opts, err := cli.NewProjectOptions([]string{filepath.Join(root, "docker-compose.yml")},
		cli.WithWorkingDirectory(root), cli.WithName("docintake"))
	require.NoError(t, err)
	project, err := opts.LoadProject(t.Context())
	require.NoError(t, err)

	names := project.ServiceNames()
	for _, want := range []string{"postgres", "nats", "s3", "ingest", "processor", "dispatcher"} {
		require.Contains(t, names, want)
	}
	known := map[string]bool{}
	for _, v := range config.Vars {
		known[v.Name] = true
	}
	for _, name := range []string{"ingest", "processor", "dispatcher"} {
		svc := project.Services[name]
		env := map[string]string{}
		for k, v := range svc.Environment {
			if strings.HasPrefix(k, "INTAKE_") {
				require.True(t, known[k], "%s sets unknown variable %s", name, k)
			}
			if v != nil {
				env[k] = *v
			}
		}
		cfg, err := config.FromEnv(func(k string) string { return env[k] })
		require.NoError(t, err, name)
		require.NoError(t, cfg.RequireDatabase(), name)
		require.NotEmpty(t, cfg.S3.Endpoint, "%s needs S3: the filesystem store is for standalone only", name)
		require.Equal(t, "docintake:latest", svc.Image, name)
		for _, vol := range svc.Volumes {
			if vol.Type == "bind" {
				_, err := os.Stat(vol.Source)
				require.NoError(t, err, "%s mounts a missing file", name)
			}
		}
		if svc.Build != nil {
			_, err := os.Stat(filepath.Join(svc.Build.Context, svc.Build.Dockerfile))
			require.NoError(t, err, "Dockerfile of %s", name)
		}
	}
	conf, err := os.ReadFile(filepath.Join(root, "deploy", "nats", "nats.conf"))
	require.NoError(t, err)
	require.Contains(t, string(conf), "sync_interval: always", "shipped NATS configs fsync before acking")
}
