package config

import "github.com/docintake/docintake/pkg/fairshare"

// Fair is how a processor shares its workers and its PDF helpers between
// clients (INTAKE_CLIENT_SHARE, INTAKE_CLIENT_BURST,
// INTAKE_CLIENT_COST_HALF_LIFE): the same policy for both pools, each
// measuring its own time.
func (c Config) Fair() fairshare.Policy {
	return fairshare.Policy{Share: c.ClientShare, Burst: c.ClientBurst, HalfLife: c.ClientCostHalfLife}
}
