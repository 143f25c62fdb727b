module github.com/docintake/docintake/services/standalone

go 1.26.8

require (
	github.com/blang/semver/v4 v4.0.0 // indirect
	github.com/compose-spec/compose-go/v2 v2.9.0 // indirect
	k8s.io/api v0.35.0 // indirect
	k8s.io/apimachinery v0.35.0 // indirect
	sigs.k8s.io/kustomize/api v0.21.0 // indirect
	sigs.k8s.io/kustomize/kyaml v0.21.0 // indirect
)
