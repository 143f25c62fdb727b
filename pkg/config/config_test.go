package config_test

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/docintake/docintake/pkg/config"
	"github.com/stretchr/testify/require"
)

func env(m map[string]string) func(string) string { return func(k string) string { return m[k] } }

func TestDefaults(t *testing.T) {
	t.Parallel()
	c, err := config.FromEnv(env(nil))
	require.NoError(t, err)
	require.Equal(t, "127.0.0.1:8080", c.HTTPAddr)
	require.Equal(t, int64(25<<20), c.MaxUploadBytes)
	require.Equal(t, "127.0.0.1:4223", c.NATSListen)
	require.Equal(t, 20*time.Second, c.PDFTimeout)
	require.Equal(t, 10*time.Second, c.OCRPageTimeout)
	require.Equal(t, []time.Duration{time.Minute, 5 * time.Minute, 30 * time.Minute, 2 * time.Hour, 6 * time.Hour, 12 * time.Hour}, c.ProcessorRetry)
	require.Equal(t, []time.Duration{5 * time.Second, 5 * time.Minute, 30 * time.Minute, 2 * time.Hour, 5 * time.Hour, 10 * time.Hour, 10 * time.Hour}, c.WebhookRetry)
	require.Error(t, c.RequireDatabase())
}

func TestErrorsNameTheVariable(t *testing.T) {
	t.Parallel()
	for name, val := range map[string]string{
		"INTAKE_MAX_UPLOAD_BYTES":         "lots",
		"INTAKE_PDF_TIMEOUT":              "20",
		"INTAKE_OCR_PAGE_TIMEOUT":         "-1s",
		"INTAKE_PROCESSOR_RETRY_SCHEDULE": "1m,,5m",
		"INTAKE_BASE_PATH":                "api/",
		"INTAKE_LOG_LEVEL":                "loud",
		"INTAKE_S3_PATH_STYLE":            "maybe",
	} {
		_, err := config.FromEnv(env(map[string]string{name: val}))
		require.ErrorContains(t, err, name)
	}
}

// The README's table is generated from Vars; it must be current.
func TestReadmeListsEveryVariable(t *testing.T) {
	t.Parallel()
	b, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	require.NoError(t, err)
	require.Contains(t, string(b), config.Markdown(), "README.md's configuration table is stale: paste config.Markdown() (intakectl config print --markdown)")
	for _, v := range config.Vars {
		require.True(t, strings.Contains(string(b), v.Name), v.Name)
	}
}

// Defaults is the configuration of an empty environment, and the fallbacks
// of libraries read it (values from README's configuration table).
func TestDefaultsFunc(t *testing.T) {
	d := config.Defaults()
	require.Equal(t, 25*time.Second, d.ShutdownTimeout)
	require.Equal(t, 15*time.Second, d.WebhookTimeout)
	require.Equal(t, 16, d.DispatcherConcurrency)
	require.Equal(t, 12*time.Hour, d.OpsSessionTTL)
}

// Every internal tuning value has its default here, so a library's zero
// fallback never lands on zero.
func TestTuningDefaultsAreSet(t *testing.T) {
	t.Parallel()
	v := reflect.ValueOf(config.Defaults().Tuning)
	for i := range v.NumField() {
		require.False(t, v.Field(i).IsZero(), "Tuning.%s has no default", v.Type().Field(i).Name)
	}
	// FromEnv sets them whatever else the environment says.
	c, err := config.FromEnv(env(map[string]string{"INTAKE_LOG_LEVEL": "debug"}))
	require.NoError(t, err)
	v = reflect.ValueOf(c.Tuning)
	for i := range v.NumField() {
		require.False(t, v.Field(i).IsZero(), "FromEnv left Tuning.%s zero", v.Type().Field(i).Name)
	}
}
