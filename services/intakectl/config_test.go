package intakectl_test

import (
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// config print is pasted into tickets and chats: every secret is shown as
// [redacted], whole for settings named as secrets, only the credentials of
// URLs and connection strings, and nothing else is hidden.
func TestConfigPrintRedactsSecrets(t *testing.T) {
	t.Parallel()
	secrets := []string{"ops-tok-7f3a", "nats-tok-91bc", "pg-pass-55d1", "s3-secret-0e4c", "AKIAEXAMPLE", "q-pass-2b"}
	env := map[string]string{
		"INTAKE_OPS_TOKEN":     "ops-tok-7f3a",
		"INTAKE_NATS_URL":      "nats://nats-tok-91bc@127.0.0.1:4222,nats://127.0.0.1:4223",
		"INTAKE_DATABASE_URL":  "postgres://docintake:pg-pass-55d1@127.0.0.1:5432/docintake?sslmode=disable&password=q-pass-2b",
		"INTAKE_S3_SECRET_KEY": "s3-secret-0e4c",
		"INTAKE_S3_ACCESS_KEY": "AKIAEXAMPLE",
		"INTAKE_S3_ENDPOINT":   "http://127.0.0.1:7070",
	}
	r := runEnv(t, env, "config", "print")
	require.Equal(t, 0, r.code, r.stderr)
	for _, s := range secrets {
		require.NotContains(t, r.stdout, s)
	}
	row := func(name string) string {
		t.Helper()
		m := regexp.MustCompile(`(?m)^` + name + `\s+(\S+)\s+(\S+)$`).FindStringSubmatch(r.stdout)
		require.NotNil(t, m, "%s in:\n%s", name, r.stdout)
		return m[1] + " " + m[2]
	}
	require.Equal(t, "[redacted] env", row("INTAKE_OPS_TOKEN"))
	require.Equal(t, "[redacted] env", row("INTAKE_S3_SECRET_KEY"))
	require.Equal(t, "[redacted] env", row("INTAKE_S3_ACCESS_KEY"))
	require.Equal(t, "nats://[redacted]@127.0.0.1:4222,nats://127.0.0.1:4223 env", row("INTAKE_NATS_URL"))
	require.Equal(t, "postgres://[redacted]@127.0.0.1:5432/docintake?sslmode=disable&password=[redacted] env", row("INTAKE_DATABASE_URL"))
	require.Equal(t, "http://127.0.0.1:7070 env", row("INTAKE_S3_ENDPOINT"), "a URL without credentials is shown as it is")
	require.Equal(t, "intake default", row("INTAKE_SUBJECT_PREFIX"))
	require.False(t, strings.Contains(r.stdout, "(set)"))
}

// A key=value connection string keeps its shape with the password hidden.
func TestConfigPrintRedactsConnectionString(t *testing.T) {
	t.Parallel()
	r := runEnv(t, map[string]string{"INTAKE_DATABASE_URL": "host=127.0.0.1 user=docintake password='pg pass' dbname=docintake"}, "config", "print")
	require.Equal(t, 0, r.code, r.stderr)
	require.NotContains(t, r.stdout, "pg pass")
	require.Contains(t, r.stdout, "host=127.0.0.1 user=docintake password=[redacted] dbname=docintake")
}
