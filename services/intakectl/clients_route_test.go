package intakectl_test

import (
	"testing"

	"github.com/docintake/docintake/pkg/store/storetest"
	"github.com/stretchr/testify/require"
)

// clients set --route-unaddressed turns the routing of uploads without
// template and party_id (issue 29) on and off; off is the default.
func TestClientsSetRouteUnaddressed(t *testing.T) {
	t.Parallel()
	env := map[string]string{"INTAKE_DATABASE_URL": storetest.SchemaURL(t)}
	require.Equal(t, 0, runEnv(t, env, "clients", "add", "--id", "acme", "--webhook-url", "https://erp.example/hook").code)
	r := runEnv(t, env, "clients", "show", "acme")
	require.Regexp(t, `(?m)^route_unaddressed:\s+off$`, r.stdout)
	r = runEnv(t, env, "clients", "set", "acme", "--route-unaddressed", "on")
	require.Equal(t, 0, r.code, r.stderr)
	require.Regexp(t, `(?m)^route_unaddressed:\s+on$`, r.stdout)
	require.Regexp(t, `(?m)^route_unaddressed:\s+on$`, runEnv(t, env, "clients", "show", "acme").stdout)
	require.Equal(t, 2, runEnv(t, env, "clients", "set", "acme", "--route-unaddressed", "yes").code)
	r = runEnv(t, env, "clients", "set", "acme", "--route-unaddressed", "off")
	require.Equal(t, 0, r.code, r.stderr)
	require.Regexp(t, `(?m)^route_unaddressed:\s+off$`, r.stdout)
}
