// Package jobspb holds the job messages published on the JetStream stream
// INTAKE (ProcessJob, DeliverJob), generated from
// proto/docintake/v1/jobs.proto by proto/gen.sh (`make proto`). Do not edit
// jobs.pb.go by hand.
package jobspb
