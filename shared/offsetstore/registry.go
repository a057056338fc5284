package offsetstore

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/sluice-io/sluice/shared/kafkautil"
)

// Registry follows connectors' own offsets topics on demand, beside the
// worker's: a topic is followed from its first Acquire, shared by every
// holder, and closed a while after its last holder released it, so that a
// GET …/offsets every few seconds does not reread a topic each time.
type Registry struct {
	worker *Store
	client *kgo.Client // the admin's: it creates connectors' topics
	admin  *kadm.Client
	opts   []kgo.Opt
	linger time.Duration

	// guard, when set, decides whether a missing connector topic may be
	// created; without one none is (SetCreateGuard).
	guard CreateGuard

	mu     sync.Mutex
	closed bool
	topics map[string]*followed
}

// CreateGuard decides whether a connector's offsets topic that does not
// exist may be created: nil creates it, an error is what the caller of
// View gets instead.
type CreateGuard func(ctx context.Context, topic string) error

// SetCreateGuard lets the registry create a connector's missing offsets
// topic when guard allows it. Without a guard it never creates one: a
// missing topic is a *kafkautil.VanishedTopicError (an agent's registry,
// which reads only topics the coordinator made sure of when it started
// the connector). Call it before the first View.
func (r *Registry) SetCreateGuard(guard CreateGuard) { r.guard = guard }

// Vanished is the error of a connector's offsets topic that is missing
// after the coordinator made sure of it, when it started the connector.
func Vanished(topic string) *kafkautil.VanishedTopicError {
	return &kafkautil.VanishedTopicError{
		Topic: topic, Setting: "offsets.storage.topic",
		Evidence: "the coordinator made sure it existed when it started the connector",
		Loss:     "restart the connector's source tasks from the worker offsets topic's positions, or from scratch",
		Create:   kafkautil.CreateCommand(kafkautil.TopicSpec{Name: topic, Compacted: true}) + " (with as many partitions as the worker offsets topic)",
	}
}

type followed struct {
	store *Store
	refs  int
	// ready is closed once the store read to its end (or failed, err set).
	ready chan struct{}
	err   error
	timer *time.Timer
}

// NewRegistry makes a registry beside worker (the worker's offsets topic,
// started by its owner): connectors' topics are created and followed with
// clients made from opts; a topic no one holds is closed after linger.
func NewRegistry(worker *Store, linger time.Duration, opts ...kgo.Opt) (*Registry, error) {
	cl, err := kgo.NewClient(opts...)
	if err != nil {
		return nil, fmt.Errorf("offsets registry client: %w", err)
	}
	return &Registry{worker: worker, client: cl, admin: kadm.NewClient(cl), opts: opts, linger: linger, topics: map[string]*followed{}}, nil
}

// Worker is the worker's offsets topic.
func (r *Registry) Worker() *Store { return r.worker }

// View returns the offsets of a connector whose offsets.storage.topic is
// topic ("" or the worker's topic: none of its own), creating the topic if
// it is missing and the guard (SetCreateGuard) allows it, and following
// it; call release when done with the view.
// It returns once both topics are read to their end.
func (r *Registry) View(ctx context.Context, topic string) (View, func(), error) {
	// Kafka Connect trims a string setting's value; so does the
	// coordinator, which creates the topic.
	topic = strings.TrimSpace(topic)
	if topic == "" || topic == r.worker.Topic() {
		if err := r.worker.ReadToEnd(ctx); err != nil {
			return View{}, func() {}, fmt.Errorf("read offsets topic %s: %w", r.worker.Topic(), err)
		}
		return View{Worker: r.worker}, func() {}, nil
	}
	st, release, err := r.acquire(ctx, topic)
	if err != nil {
		return View{}, func() {}, err
	}
	v := View{Worker: r.worker, Connector: st}
	if err := v.ReadToEnd(ctx); err != nil {
		release()
		return View{}, func() {}, err
	}
	return v, release, nil
}

func (r *Registry) acquire(ctx context.Context, topic string) (*Store, func(), error) {
	r.mu.Lock()
	if r.closed {
		r.mu.Unlock()
		return nil, nil, errors.New("offsets registry closed")
	}
	f := r.topics[topic]
	if f == nil {
		f = &followed{ready: make(chan struct{})}
		r.topics[topic] = f
		go r.open(topic, f)
	}
	f.refs++
	if f.timer != nil {
		f.timer.Stop()
		f.timer = nil
	}
	r.mu.Unlock()
	release := sync.OnceFunc(func() { r.release(topic, f) })
	select {
	case <-ctx.Done():
		release()
		return nil, nil, fmt.Errorf("follow offsets topic %s: %w", topic, ctx.Err())
	case <-f.ready:
	}
	if f.err != nil {
		release()
		return nil, nil, f.err
	}
	return f.store, release, nil
}

// openTimeout bounds creating and first reading a connector's topic, which
// runs apart from any one caller's context (several may wait on it).
const openTimeout = 60 * time.Second

func (r *Registry) open(topic string, f *followed) {
	defer func() {
		close(f.ready)
		// A failure whose callers all gave up before it came is not
		// kept (release let it linger, the open still running): the next
		// caller tries again.
		r.mu.Lock()
		defer r.mu.Unlock()
		if f.err != nil && f.refs == 0 && r.topics[topic] == f {
			if f.timer != nil {
				f.timer.Stop()
			}
			delete(r.topics, topic)
		}
	}()
	ctx, cancel := context.WithTimeout(context.Background(), openTimeout)
	defer cancel()
	if err := r.ensure(ctx, topic); err != nil {
		f.err = err
		return
	}
	st, err := New(topic, r.opts...)
	if err != nil {
		f.err = fmt.Errorf("follow offsets topic %s: %w", topic, err)
		return
	}
	if err := st.Start(ctx); err != nil {
		st.Close()
		f.err = fmt.Errorf("read offsets topic %s: %w", topic, err)
		return
	}
	f.store = st
}

// An agent that does not find a connector's offsets topic looks again
// vanishedChecks times, vanishedWait apart, before calling it vanished.
const (
	vanishedChecks = 10
	vanishedWait   = 200 * time.Millisecond
)

// ensure makes sure a connector's topic exists: it creates a missing one
// only when the guard allows it.
func (r *Registry) ensure(ctx context.Context, topic string) error {
	exists, err := kafkautil.TopicExists(ctx, r.client, topic)
	if err != nil {
		return fmt.Errorf("follow offsets topic %s: %w", topic, err)
	}
	if exists {
		return nil
	}
	if r.guard == nil {
		// An agent: the leader made sure of the topic as it started the
		// connector, a moment ago; a broker of a cluster may not show it
		// yet. Look again for a while before calling it vanished.
		for range vanishedChecks {
			select {
			case <-ctx.Done():
				return Vanished(topic)
			case <-time.After(vanishedWait):
			}
			if exists, err := kafkautil.TopicExists(ctx, r.client, topic); err == nil && exists {
				return nil
			}
		}
		return Vanished(topic)
	}
	if err := r.guard(ctx, topic); err != nil {
		return err
	}
	return EnsureTopic(ctx, r.admin, topic, r.worker.Topic())
}

func (r *Registry) release(topic string, f *followed) {
	r.mu.Lock()
	defer r.mu.Unlock()
	f.refs--
	if f.refs > 0 || r.topics[topic] != f {
		return
	}
	failed := false
	select {
	case <-f.ready:
		failed = f.err != nil
	default:
	}
	if failed || r.linger <= 0 {
		// A failed open is retried by the next caller, not remembered.
		r.drop(topic, f)
		return
	}
	f.timer = time.AfterFunc(r.linger, func() {
		r.mu.Lock()
		defer r.mu.Unlock()
		if f.refs == 0 && r.topics[topic] == f {
			r.drop(topic, f)
		}
	})
}

// drop forgets topic and closes its store once it opened; r.mu is held.
func (r *Registry) drop(topic string, f *followed) {
	delete(r.topics, topic)
	go func() {
		<-f.ready
		if f.store != nil {
			f.store.Close()
		}
	}()
}

// Close stops following every connector's topic (not the worker's).
func (r *Registry) Close() {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		return
	}
	r.closed = true
	r.client.Close()
	for topic, f := range r.topics {
		if f.timer != nil {
			f.timer.Stop()
		}
		r.drop(topic, f)
	}
}

// CreateTopicError is the failure to create a connector's offsets topic;
// its text is Kafka Connect's.
type CreateTopicError struct {
	Topic string
	Err   error
}

// Error is Kafka Connect's message for a topic it could not create.
func (e *CreateTopicError) Error() string {
	return fmt.Sprintf("Unable to create topic(s) '%s': %v", e.Topic, e.Err)
}

// Unwrap returns the creation's error.
func (e *CreateTopicError) Unwrap() error { return e.Err }

// EnsureTopic creates a connector's offsets topic if it is missing, as
// Kafka Connect does: compacted, with as many partitions as the worker's
// offsets topic like (Kafka Connect takes the worker's
// offsets.storage.partitions) and the broker's default replication.
func EnsureTopic(ctx context.Context, admin *kadm.Client, topic, like string) error {
	// A transient failure to read the worker topic's layout is an error:
	// the topic, once created with the broker's default instead, would
	// keep it for good. A worker topic that does not exist leaves the
	// broker's default.
	partitions := int32(-1)
	td, err := admin.ListTopics(ctx, like)
	if err != nil {
		return fmt.Errorf("read the partitions of offsets topic %s, which %s copies: %w", like, topic, err)
	}
	if d, ok := td[like]; ok && d.Err == nil && len(d.Partitions) > 0 {
		partitions = int32(len(d.Partitions))
	}
	err = kafkautil.EnsureTopics(ctx, admin, kafkautil.TopicSpec{Name: topic, Partitions: partitions, Compacted: true})
	if err != nil {
		var be *kafkautil.BrokerError
		var ke *kerr.Error
		switch {
		case errors.As(err, &be):
			err = be
		case errors.As(err, &ke):
			err = errors.New(ke.Description)
		}
		return &CreateTopicError{Topic: topic, Err: err}
	}
	return nil
}
