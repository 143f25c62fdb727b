package config_test

import (
	"net/netip"
	"testing"

	"github.com/docintake/docintake/pkg/config"
	"github.com/stretchr/testify/require"
)

// The trusted proxies default to loopback only; addresses and prefixes may
// be mixed; the user header must be a header name.
func TestOpsProxySettings(t *testing.T) {
	t.Parallel()
	c, err := config.FromEnv(env(nil))
	require.NoError(t, err)
	require.Equal(t, []netip.Prefix{netip.MustParsePrefix("127.0.0.1/32"), netip.MustParsePrefix("::1/128")}, c.OpsTrustedProxies)
	require.Empty(t, c.OpsTrustedUserHeader, "the header is never read unless configured")
	require.False(t, c.OpsConsole)

	c, err = config.FromEnv(env(map[string]string{"INTAKE_OPS_TRUSTED_PROXIES": "127.0.0.2, 127.0.0.0/8,::1",
		"INTAKE_OPS_TRUSTED_USER_HEADER": "X-Forwarded-User", "INTAKE_OPS_CONSOLE": "true"}))
	require.NoError(t, err)
	require.Equal(t, []netip.Prefix{netip.MustParsePrefix("127.0.0.2/32"), netip.MustParsePrefix("127.0.0.0/8"),
		netip.MustParsePrefix("::1/128")}, c.OpsTrustedProxies)
	require.Equal(t, "X-Forwarded-User", c.OpsTrustedUserHeader)
	require.True(t, c.OpsConsole)

	for k, v := range map[string]string{"INTAKE_OPS_TRUSTED_PROXIES": "localhost", "INTAKE_OPS_TRUSTED_USER_HEADER": "X Forwarded User"} {
		_, err := config.FromEnv(env(map[string]string{k: v}))
		require.ErrorContains(t, err, k)
	}
}
