#!/bin/sh
# Regenerates the Go code for proto/**/*.proto into pkg/ (package paths from
# each file's go_package). Installs what it needs:
#   - protoc-gen-go at the google.golang.org/protobuf version of pkg/go.mod,
#     into $GOBIN (default $HOME/.cache/docintake-bin);
#   - protoc and the well-known .proto files (Debian protobuf-compiler,
#     libprotobuf-dev) when missing and we are root with apt-get.
set -eu

root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"

if ! command -v protoc >/dev/null 2>&1 || [ ! -f /usr/include/google/protobuf/timestamp.proto ]; then
	if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
		apt-get update -qq && apt-get install -y -qq protobuf-compiler libprotobuf-dev >/dev/null
	else
		echo "proto/gen.sh: install protoc and the well-known types (Debian: apt-get install protobuf-compiler libprotobuf-dev)" >&2
		exit 1
	fi
fi

GOBIN=${GOBIN:-$HOME/.cache/docintake-bin}
export GOBIN
version=$(cd pkg && go list -m -f '{{.Version}}' google.golang.org/protobuf)
plugin="$GOBIN/protoc-gen-go"
if [ ! -x "$plugin" ] || [ "$("$plugin" --version 2>/dev/null)" != "protoc-gen-go $version" ]; then
	go install "google.golang.org/protobuf/cmd/protoc-gen-go@$version"
fi

include=/usr/include
find proto -name '*.proto' | sort | xargs protoc -I proto -I "$include" \
	--plugin=protoc-gen-go="$plugin" \
	--go_out=pkg --go_opt=module=github.com/docintake/docintake/pkg
echo "proto/gen.sh: generated with $("$plugin" --version), $(protoc --version)"
