package store

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"testing"
)

// TestCheckSizes: a config write is refused, as a *TooLargeError naming the
// record, when one record exceeds the topic's limit, and naming no record
// when all of them together exceed MaxWriteBytes.
func TestCheckSizes(t *testing.T) {
	s := &ConfigStore{}
	padded := func(n int) map[string]string { return map[string]string{"p": strings.Repeat("x", n)} }
	many := make([]map[string]string, 10)
	for i := range many {
		many[i] = padded(900_000)
	}
	limit := producerBatchMaxBytes - recordFraming
	tests := []struct {
		name    string
		cmd     Command
		wantKey string // "" with wantErr: the whole write
		wantErr bool
	}{
		{"a small config", PutConnectorConfig{Name: "c", Config: padded(10)}, "", false},
		{"a config at the limit", PutConnectorConfig{Name: "c", Config: padded(limit - len(`connector-c{"properties":{"p":""}}`))}, "", false},
		{"a config a byte over", PutConnectorConfig{Name: "c", Config: padded(limit - len(`connector-c{"properties":{"p":""}}`) + 1)}, "connector-c", true},
		{"one task over", PutTaskConfigs{Name: "c", Tasks: []map[string]string{padded(10), padded(limit)}}, "task-c-1", true},
		{"tasks that fit one by one but not together", PutTaskConfigs{Name: "c", Tasks: many}, "", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := s.Check(context.Background(), tt.cmd)
			var tl *TooLargeError
			switch {
			case !tt.wantErr && err != nil:
				t.Fatalf("refused: %v", err)
			case tt.wantErr && !errors.As(err, &tl):
				t.Fatalf("got %v, want a *TooLargeError", err)
			case tt.wantErr && tl.Key != tt.wantKey:
				t.Fatalf("refused %q, want %q: %v", tl.Key, tt.wantKey, err)
			case tt.wantErr && tl.Key == "" && tl.Limit != MaxWriteBytes:
				t.Fatalf("limit %d, want %s", tl.Limit, strconv.Itoa(MaxWriteBytes))
			}
		})
	}
}
