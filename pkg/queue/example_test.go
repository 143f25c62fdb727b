package queue_test

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/docintake/docintake/pkg/queue"
)

// Example shows the path of a job: declare the stream, publish twice with
// one message id (the copy is dropped), consume and settle.
func Example() {
	dir, _ := os.MkdirTemp("", "queue-example-*")
	defer os.RemoveAll(dir)
	srv, _ := server.NewServer(&server.Options{Host: "127.0.0.1", Port: server.RANDOM_PORT, JetStream: true, StoreDir: dir, NoLog: true, NoSigs: true})
	srv.Start()
	defer srv.WaitForShutdown()
	defer srv.Shutdown()
	srv.ReadyForConnections(10 * time.Second)
	nc, _ := nats.Connect(srv.ClientURL())
	defer nc.Close()
	js, _ := jetstream.New(nc)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()

	cfg := queue.DefaultConfig()
	if err := queue.Ensure(ctx, js, cfg); err != nil {
		fmt.Println(err)
		return
	}
	pub := queue.NewPublisher(js, cfg.Stream)
	for range 2 { // e.g. a relay that died before marking the row sent
		_ = pub.Publish(ctx, cfg.ProcessSubject("acme"), testMsgID("L1", 1), []byte("L1"))
	}

	n, _ := streamMsgs(ctx, js, cfg.Stream)
	fmt.Println("stream holds", n, "message")

	cons, _ := js.Consumer(ctx, cfg.Stream, cfg.Processor.Durable)
	err := queue.Consume(ctx, cons, 4, func(_ context.Context, d queue.Delivery) error {
		fmt.Printf("%s %s attempt %d\n", d.Subject, d.MsgID, d.NumDelivered)
		cancel() // stop after one job; Consume drains and returns nil
		return nil
	}, queue.ConsumeOptions{})
	fmt.Println("consume:", err)
	// Output:
	// stream holds 1 message
	// intake.process.acme L1:process:1 attempt 1
	// consume: <nil>
}
