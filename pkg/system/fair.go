package system

import (
	"github.com/docintake/docintake/pkg/config"
	"github.com/docintake/docintake/pkg/fairshare"
)

// FairPolicy is how a processor shares its workers and its PDF helpers
// between clients (INTAKE_CLIENT_SHARE, INTAKE_CLIENT_BURST,
// INTAKE_CLIENT_COST_HALF_LIFE): the same policy for both pools, each
// measuring its own time.
func FairPolicy(cfg config.Config) fairshare.Policy {
	return fairshare.Policy{Share: cfg.ClientShare, Burst: cfg.ClientBurst, HalfLife: cfg.ClientCostHalfLife}
}
