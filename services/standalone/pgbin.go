package standalone

import "github.com/docintake/docintake/services/standalone/internal/pgcluster"

// PostgresBinDir returns the directory of the PostgreSQL server binaries the
// private cluster runs from (the newest /usr/lib/postgresql/<version>/bin),
// or an error saying what to install. The chaos and benchmark harnesses
// (services/systemtest) start the same server and skip without it.
func PostgresBinDir() (string, error) { return pgcluster.BinDir() }
