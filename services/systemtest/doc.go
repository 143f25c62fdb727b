// Package systemtest is docintake's tooling, not part of the product: it
// drives the whole system from outside and checks the repository as a
// whole. Nothing in the product imports it; its module requires the product
// modules, never the other way round.
//
// Its tests run with `make test` like every module's:
//   - the end-to-end tests of intakectl's listen and upload against a running
//     system (standalonetest), and the statements per document
//     (roundtrips_test.go);
//   - the deployment files: compose, Kubernetes (kustomize), Prometheus
//     rules, the Grafana dashboard and the metrics README lists;
//   - the modules: each builds on its own, no product module requires a
//     module only tooling needs, and no module cycle exists, even through
//     tests;
//   - the short chaos run (internal/chaos, the binaries of `make build` in
//     INTAKE_CHAOS_BIN) and the benchmark harness's own tests.
//
// Its commands: cmd/bench (`make bench`, BENCHMARKS.md) and cmd/chaos
// (`make chaos`, RELIABILITY.md). internal/sysproc starts the binaries and
// servers both drive.
package systemtest
