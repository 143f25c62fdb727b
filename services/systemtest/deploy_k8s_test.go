package systemtest_test

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/docintake/docintake/pkg/config"
	"github.com/docintake/docintake/pkg/mailbox"
	"github.com/docintake/docintake/pkg/repotest"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	kjson "k8s.io/apimachinery/pkg/runtime/serializer/json"
	"k8s.io/apimachinery/pkg/util/intstr"
	"sigs.k8s.io/kustomize/api/krusty"
	"sigs.k8s.io/kustomize/kyaml/filesys"
	"sigs.k8s.io/yaml"
)

// k8sObjects builds the kustomize base offline (the krusty API is what
// `kustomize build` runs) and decodes every object: built-in kinds strictly
// with the Kubernetes API types (an unknown or misspelt field fails),
// custom resources (KEDA) as unstructured.
func k8sObjects(t *testing.T) (typed []runtime.Object, custom []*unstructured.Unstructured) {
	t.Helper()
	k := krusty.MakeKustomizer(krusty.MakeDefaultOptions())
	res, err := k.Run(filesys.MakeFsOnDisk(), filepath.Join(repotest.Root(t), "deploy", "k8s", "base"))
	require.NoError(t, err, "kustomize build deploy/k8s/base")
	out, err := res.AsYaml()
	require.NoError(t, err)

	scheme := runtime.NewScheme()
	require.NoError(t, corev1.AddToScheme(scheme))
	require.NoError(t, appsv1.AddToScheme(scheme))
	require.NoError(t, policyv1.AddToScheme(scheme))
	dec := kjson.NewSerializerWithOptions(kjson.DefaultMetaFactory, scheme, scheme, kjson.SerializerOptions{Yaml: true, Strict: true})
	for doc := range strings.SplitSeq(string(out), "\n---\n") {
		if strings.TrimSpace(doc) == "" {
			continue
		}
		var u unstructured.Unstructured
		require.NoError(t, yaml.Unmarshal([]byte(doc), &u.Object))
		if !scheme.Recognizes(u.GroupVersionKind()) {
			custom = append(custom, &u)
			continue
		}
		obj, _, err := dec.Decode([]byte(doc), nil, nil)
		require.NoError(t, err, "decode %s %s", u.GetKind(), u.GetName())
		typed = append(typed, obj)
	}
	return typed, custom
}

func TestKustomizeBase(t *testing.T) {
	t.Parallel()
	typed, custom := k8sObjects(t)

	deployments := map[string]*appsv1.Deployment{}
	services := map[string]*corev1.Service{}
	pdbs := map[string]*policyv1.PodDisruptionBudget{}
	cms := map[string]*corev1.ConfigMap{}
	secrets := map[string]*corev1.Secret{}
	for _, o := range typed {
		switch o := o.(type) {
		case *appsv1.Deployment:
			deployments[o.Name] = o
		case *corev1.Service:
			services[o.Name] = o
		case *policyv1.PodDisruptionBudget:
			pdbs[o.Name] = o
		case *corev1.ConfigMap:
			cms[o.Name] = o
		case *corev1.Secret:
			secrets[o.Name] = o
		default:
			t.Fatalf("unexpected object %T", o)
		}
	}
	cm, secret := cms["docintake-config"], secrets["docintake-secrets"]
	require.NotNil(t, cm, "ConfigMap docintake-config")
	require.NotNil(t, secret, "Secret docintake-secrets")

	// The ConfigMap and Secret together are a valid configuration that
	// names only known variables.
	known := map[string]bool{}
	for _, v := range config.Vars {
		known[v.Name] = true
	}
	env := map[string]string{}
	for k, v := range cm.Data {
		env[k] = v
	}
	for k, v := range secret.StringData {
		require.NotContains(t, cm.Data, k, "%s is secret; keep it out of the ConfigMap", k)
		env[k] = v
	}
	for k := range env {
		require.True(t, known[k], "unknown variable %s", k)
	}
	cfg, err := config.FromEnv(func(k string) string { return env[k] })
	require.NoError(t, err)
	require.NoError(t, cfg.RequireDatabase())
	require.NotEmpty(t, cfg.S3.Endpoint)
	require.NotEmpty(t, cfg.OpsToken)
	require.Equal(t, 3, cfg.StreamReplicas, "production streams are R3")

	ports := map[string]string{"ingest": cfg.HTTPAddr, "processor": cfg.MetricsAddr, "dispatcher": cfg.MetricsAddr,
		"mailintake": cfg.MetricsAddr}
	for _, name := range []string{"ingest", "processor", "dispatcher", "mailintake"} {
		d := deployments[name]
		require.NotNil(t, d, "Deployment %s", name)
		spec := d.Spec.Template.Spec
		require.Len(t, spec.Containers, 1, name)
		c := spec.Containers[0]

		require.Equal(t, "ghcr.io/docintake/docintake:0.1.0", c.Image, "%s: kustomize pins the image", name)
		require.Equal(t, []string{"/usr/local/bin/" + name}, c.Command, name)
		require.Equal(t, "docintake-config", c.EnvFrom[0].ConfigMapRef.Name, name)
		require.Equal(t, "docintake-secrets", c.EnvFrom[1].SecretRef.Name, name)

		// Probes on the port the process listens on.
		require.Len(t, c.Ports, 1, name)
		_, want, _ := strings.Cut(ports[name], ":")
		require.Equal(t, want, fmt.Sprint(c.Ports[0].ContainerPort), "%s container port", name)
		for kind, p := range map[string]*corev1.Probe{"liveness": c.LivenessProbe, "readiness": c.ReadinessProbe} {
			require.NotNil(t, p, "%s %s probe", name, kind)
			require.NotNil(t, p.HTTPGet, "%s %s probe", name, kind)
			require.Equal(t, intstr.FromString(c.Ports[0].Name), p.HTTPGet.Port, "%s %s probe port", name, kind)
		}
		require.Equal(t, "/healthz", c.LivenessProbe.HTTPGet.Path, name)
		require.Equal(t, "/readyz", c.ReadinessProbe.HTTPGet.Path, name)

		// Resources: requests for scheduling and HPA, limits against runaways.
		for _, r := range []corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory} {
			req, lim := c.Resources.Requests[r], c.Resources.Limits[r]
			require.False(t, req.IsZero(), "%s requests %s", name, r)
			require.False(t, lim.IsZero(), "%s limits %s", name, r)
			require.LessOrEqual(t, req.Cmp(lim), 0, "%s: %s request above limit", name, r)
		}

		// Graceful termination: Kubernetes waits longer than the service's
		// own drain before SIGKILL.
		require.NotNil(t, spec.TerminationGracePeriodSeconds, name)
		grace := time.Duration(*spec.TerminationGracePeriodSeconds) * time.Second
		require.Greater(t, grace, cfg.ShutdownTimeout, "%s terminationGracePeriodSeconds", name)

		// Hardened pod: non-root (the image's uid), read-only root.
		require.True(t, *spec.SecurityContext.RunAsNonRoot, name)
		require.Equal(t, int64(10001), *spec.SecurityContext.RunAsUser, name)
		require.True(t, *c.SecurityContext.ReadOnlyRootFilesystem, name)
		require.False(t, *c.SecurityContext.AllowPrivilegeEscalation, name)

		// Selector, template labels, Service and PDB agree.
		sel := d.Spec.Selector.MatchLabels
		for k, v := range sel {
			require.Equal(t, v, d.Spec.Template.Labels[k], "%s template labels match the selector", name)
		}
		svc := services[name]
		require.NotNil(t, svc, "Service %s", name)
		require.Equal(t, sel, svc.Spec.Selector, "%s Service selects the pods", name)
		require.Equal(t, intstr.FromString(c.Ports[0].Name), svc.Spec.Ports[0].TargetPort, name)
		pdb := pdbs[name]
		require.NotNil(t, pdb, "PodDisruptionBudget %s", name)
		require.Equal(t, sel, pdb.Spec.Selector.MatchLabels, name)
		require.Equal(t, "true", d.Spec.Template.Annotations["prometheus.io/scrape"], name)
		require.Equal(t, want, d.Spec.Template.Annotations["prometheus.io/port"], name)
	}
	require.NotNil(t, deployments["ingest"].Spec.Replicas)
	require.GreaterOrEqual(t, *deployments["ingest"].Spec.Replicas, int32(2), "ingest survives a node loss")
	require.NotNil(t, deployments["ingest"].Spec.Template.Spec.Containers[0].Lifecycle.PreStop.Sleep, "ingest pauses before draining")
	for _, name := range []string{"processor", "dispatcher"} {
		require.Nil(t, deployments[name].Spec.Replicas, "%s: KEDA's HPA owns replicas; a fixed count would fight it", name)
	}
	checkMailintake(t, deployments["mailintake"], cms, secrets, known)

	// KEDA: one ScaledObject per worker, on its own JetStream consumer.
	scaled := map[string]*unstructured.Unstructured{}
	for _, u := range custom {
		require.Equal(t, "keda.sh/v1alpha1", u.GetAPIVersion(), "only KEDA custom resources, got %s", u.GetKind())
		require.Equal(t, "ScaledObject", u.GetKind())
		scaled[u.GetName()] = u
	}
	require.Len(t, scaled, 2)
	for _, name := range []string{"processor", "dispatcher"} {
		u := scaled[name]
		require.NotNil(t, u, "ScaledObject %s", name)
		target, _, _ := unstructured.NestedString(u.Object, "spec", "scaleTargetRef", "name")
		require.Equal(t, name, target)
		require.Contains(t, deployments, target)
		minR, maxR := number(t, u, "spec", "minReplicaCount"), number(t, u, "spec", "maxReplicaCount")
		require.GreaterOrEqual(t, minR, 1.0, "%s never scales to zero: its sweeper/scheduler runs there", name)
		require.Greater(t, maxR, minR)
		triggers, _, _ := unstructured.NestedSlice(u.Object, "spec", "triggers")
		require.Len(t, triggers, 1)
		tr := triggers[0].(map[string]any)
		require.Equal(t, "nats-jetstream", tr["type"])
		md := tr["metadata"].(map[string]any)
		require.Equal(t, cfg.Stream, md["stream"], "%s scales on the stream the services use", name)
		require.Equal(t, name, md["consumer"], "%s scales on its own durable consumer", name)
		require.NotEmpty(t, md["natsServerMonitoringEndpoint"])
		require.True(t, strings.HasSuffix(md["natsServerMonitoringEndpoint"].(string), ":8222"), "the monitoring port, not the client port")
		require.Regexp(t, `^[1-9][0-9]*$`, md["lagThreshold"], "KEDA wants the threshold as a string of digits")
		natsHost := strings.TrimPrefix(cfg.NATSURL, "nats://")
		natsHost, _, _ = strings.Cut(natsHost, ":")
		require.True(t, strings.HasPrefix(md["natsServerMonitoringEndpoint"].(string), natsHost+":"),
			"KEDA reads the NATS the services connect to")
	}
}

// number reads a numeric field of a custom resource (YAML numbers decode as
// float64 through JSON).
func number(t *testing.T, u *unstructured.Unstructured, fields ...string) float64 {
	t.Helper()
	v, ok, err := unstructured.NestedFieldNoCopy(u.Object, fields...)
	require.NoError(t, err)
	require.True(t, ok, "%s %s has no %v", u.GetKind(), u.GetName(), fields)
	switch n := v.(type) {
	case float64:
		return n
	case int64:
		return float64(n)
	}
	t.Fatalf("%s %s: %v is %T, not a number", u.GetKind(), u.GetName(), fields, v)
	return 0
}

// The image reference the manifests use is the one kustomize rewrites.
func TestKustomizeBuildIsDeterministic(t *testing.T) {
	t.Parallel()
	build := func() []byte {
		k := krusty.MakeKustomizer(krusty.MakeDefaultOptions())
		res, err := k.Run(filesys.MakeFsOnDisk(), filepath.Join(repotest.Root(t), "deploy", "k8s", "base"))
		require.NoError(t, err)
		out, err := res.AsYaml()
		require.NoError(t, err)
		return out
	}
	a, b := build(), build()
	require.True(t, bytes.Equal(a, b))
	require.NotContains(t, string(a), "image: docintake\n", "every image is rewritten to the pinned one")
}

// checkMailintake checks the mail intake's Deployment beyond what every
// service has (probes and metrics on INTAKE_METRICS_ADDR): a fixed replica
// count (no KEDA: it has no queue), INTAKE_MAILBOXES_FILE naming a file of a
// mounted ConfigMap that loads as a mailboxes file, and the mailboxes'
// secrets as read-only files of a Secret (never environment variables of
// the ConfigMap).
func checkMailintake(t *testing.T, d *appsv1.Deployment, cms map[string]*corev1.ConfigMap,
	secrets map[string]*corev1.Secret, known map[string]bool) {
	t.Helper()
	require.NotNil(t, d, "Deployment mailintake")
	require.NotNil(t, d.Spec.Replicas, "mailintake: a fixed replica count (the advisory lock makes more safe)")
	require.GreaterOrEqual(t, *d.Spec.Replicas, int32(1))
	spec := d.Spec.Template.Spec
	c := spec.Containers[0]
	var file string
	for _, e := range c.Env {
		require.True(t, known[e.Name], "mailintake sets unknown variable %s", e.Name)
		if e.Name == "INTAKE_MAILBOXES_FILE" {
			file = e.Value
		}
	}
	require.NotEmpty(t, file, "mailintake: INTAKE_MAILBOXES_FILE")
	volumes := map[string]corev1.Volume{}
	for _, v := range spec.Volumes {
		volumes[v.Name] = v
	}
	var fromConfigMap, fromSecret bool
	for _, m := range c.VolumeMounts {
		v := volumes[m.Name]
		switch {
		case v.ConfigMap != nil && strings.HasPrefix(file, m.MountPath+"/"):
			cm := cms[v.ConfigMap.Name]
			require.NotNil(t, cm, "mailintake mounts ConfigMap %s", v.ConfigMap.Name)
			data, ok := cm.Data[strings.TrimPrefix(file, m.MountPath+"/")]
			require.True(t, ok, "ConfigMap %s holds %s", cm.Name, file)
			p := filepath.Join(t.TempDir(), "mailboxes.yaml")
			require.NoError(t, os.WriteFile(p, []byte(data), 0o600))
			_, err := mailbox.LoadMailboxes(p)
			require.NoError(t, err, "the ConfigMap's mailboxes file loads")
			fromConfigMap = true
		case v.Secret != nil:
			require.Contains(t, secrets, v.Secret.SecretName, "mailintake mounts Secret %s", v.Secret.SecretName)
			require.True(t, m.ReadOnly, "the mailbox secrets are mounted read-only")
			fromSecret = true
		}
	}
	require.True(t, fromConfigMap, "INTAKE_MAILBOXES_FILE is a file of a mounted ConfigMap")
	require.True(t, fromSecret, "the mailboxes' secrets are files of a mounted Secret")
}
