package systemtest_test

import (
	"testing"

	"github.com/docintake/docintake/pkg/objectstore/objectstoretest"
)

func TestMain(m *testing.M) { objectstoretest.Main(m) }
