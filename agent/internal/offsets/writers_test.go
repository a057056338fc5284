package offsets

import (
	"testing"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/sluice-io/sluice/shared/kafkautil"
)

// TestWritersPutAfterClose: a change that ends after the executor closed
// does not keep its writer (nothing would ever close it).
func TestWritersPutAfterClose(t *testing.T) {
	w, err := kafkautil.NewTxnWriter("txn-late", kgo.SeedBrokers("127.0.0.1:1"))
	if err != nil {
		t.Fatal(err)
	}
	ws := newWriters()
	ws.close()
	ws.put("txn-late", w)
	if got := ws.take("txn-late"); got != nil {
		t.Fatal("a writer put after close was kept")
	}
}
