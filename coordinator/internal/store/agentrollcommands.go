package store

import (
	"errors"
	"fmt"
	"time"

	"github.com/sluice-io/sluice/shared/records"
)

// The fleet commands of agent rolls. A roll is created whole, then moved
// on by transitions, each of which checks the state it starts from
// (ErrStale otherwise) and stamps UpdatedAt with its At; a step that
// changes an agent's mark (its drain, its uncordon) is one Stores.Apply of
// the MarkAgent and the transition together:
//
//	command            from                               to
//	StartAgentRoll     (none)                             running, every agent pending
//	PauseAgentRoll     running                            paused
//	ResumeAgentRoll    paused                             running (the batch's waits start anew)
//	AbortAgentRoll     not final                          aborted
//	DrainRollBatch     running, batch's agents pending    draining (with each agent's drain mark)
//	RollAgentDrained   running, agent draining            waiting_restart
//	RollAgentGone      running, agent draining/waiting    seen gone
//	RollAgentRestarted running, agent waiting_restart     uncordoning
//	RollAgentDone      running, agent uncordoning         done (with its uncordon); the last
//	                                                      of its batch moves the roll on, the
//	                                                      last of all finishes it
//	FailAgentRoll      running, agent of the batch        agent failed, roll failed
//	DeleteAgentRoll    any                                (none)

// StartAgentRoll records a new roll, running with every agent pending.
type StartAgentRoll struct{ Roll AgentRoll }

func (StartAgentRoll) topic() Topic { return TopicFleet }

func (c StartAgentRoll) encode(v *view) ([]records.Record, error) {
	r := c.Roll
	switch {
	case r.ID == "":
		return nil, errors.New("an agent roll needs an id")
	case r.State != AgentRollRunning || r.Batch != 0 || len(r.Agents) == 0 || r.Spec.BatchSize < 1:
		return nil, fmt.Errorf("agent roll %s must start running at its first batch, with agents and a batch size", r.ID)
	}
	seen := map[string]bool{}
	for _, a := range r.Agents {
		if a.Step != RollPending || a.ID == "" || seen[a.ID] {
			return nil, fmt.Errorf("agent roll %s must start with distinct pending agents", r.ID)
		}
		seen[a.ID] = true
	}
	if _, ok := v.agentRoll(r.ID); ok {
		return nil, fmt.Errorf("%w: agent roll %s exists already", ErrStale, r.ID)
	}
	return v.putAgentRoll(r)
}

// DeleteAgentRoll removes a roll's record.
type DeleteAgentRoll struct{ ID string }

func (DeleteAgentRoll) topic() Topic { return TopicFleet }

func (c DeleteAgentRoll) encode(v *view) ([]records.Record, error) {
	if c.ID == "" {
		return nil, errors.New("deleting an agent roll needs its id")
	}
	v.rolls[c.ID] = nil
	return tombstone(fleetAgentRollPrefix + c.ID), nil
}

// putAgentRoll records r in the view and returns its record.
func (v *view) putAgentRoll(r AgentRoll) ([]records.Record, error) {
	r = deepCopy(r)
	v.rolls[r.ID] = &r
	return jsonRecords(fleetAgentRollPrefix+r.ID, r)
}

// rollTransition is the record of roll id after change, stamped at.
func (v *view) rollTransition(id string, at time.Time, change func(r *AgentRoll) error) ([]records.Record, error) {
	r, ok := v.agentRoll(id)
	if !ok {
		return nil, fmt.Errorf("%w: agent roll %s is gone", ErrStale, id)
	}
	if err := change(&r); err != nil {
		return nil, err
	}
	r.UpdatedAt = at.UTC()
	return v.putAgentRoll(r)
}

// staleRoll is the ErrStale of a roll not in the state a transition needs.
func staleRoll(r *AgentRoll, want string) error {
	return fmt.Errorf("%w: agent roll %s is %s (batch %d), not %s", ErrStale, r.ID, r.State, r.Batch+1, want)
}

// rollAgentIn checks that r runs at batch batch and that agent id of it is
// at one of steps; it returns the agent.
func rollAgentIn(r *AgentRoll, batch int, id string, steps ...string) (*RolledAgent, error) {
	if r.State != AgentRollRunning || r.Batch != batch {
		return nil, staleRoll(r, fmt.Sprintf("running at batch %d", batch+1))
	}
	a, ok := r.agent(id)
	if !ok {
		return nil, fmt.Errorf("agent roll %s has no agent %s in batch %d", r.ID, id, batch+1)
	}
	for _, s := range steps {
		if a.Step == s {
			return a, nil
		}
	}
	return nil, fmt.Errorf("%w: agent %s of roll %s is %s, not %v", ErrStale, id, r.ID, a.Step, steps)
}

// PauseAgentRoll pauses a running roll before its next step.
type PauseAgentRoll struct {
	ID string
	At time.Time
}

func (PauseAgentRoll) topic() Topic { return TopicFleet }

func (c PauseAgentRoll) encode(v *view) ([]records.Record, error) {
	return v.rollTransition(c.ID, c.At, func(r *AgentRoll) error {
		if r.State != AgentRollRunning {
			return staleRoll(r, AgentRollRunning)
		}
		r.State = AgentRollPaused
		return nil
	})
}

// ResumeAgentRoll resumes a paused roll where it stopped: the agents of
// its batch that wait (drain, restart) wait anew from At, so the time
// paused does not count toward their timeout.
type ResumeAgentRoll struct {
	ID string
	At time.Time
}

func (ResumeAgentRoll) topic() Topic { return TopicFleet }

func (c ResumeAgentRoll) encode(v *view) ([]records.Record, error) {
	return v.rollTransition(c.ID, c.At, func(r *AgentRoll) error {
		if r.State != AgentRollPaused {
			return staleRoll(r, AgentRollPaused)
		}
		r.State = AgentRollRunning
		from, to := r.BatchRange(r.Batch)
		for i := from; i < to; i++ {
			if a := &r.Agents[i]; a.Step == RollDraining || a.Step == RollWaitingRestart {
				a.Since = c.At.UTC()
			}
		}
		return nil
	})
}

// AbortAgentRoll ends a roll for good; its agents stay as they are
// (draining or cordoned ones too).
type AbortAgentRoll struct {
	ID string
	At time.Time
}

func (AbortAgentRoll) topic() Topic { return TopicFleet }

func (c AbortAgentRoll) encode(v *view) ([]records.Record, error) {
	return v.rollTransition(c.ID, c.At, func(r *AgentRoll) error {
		if r.Final() {
			return staleRoll(r, "in progress")
		}
		r.State = AgentRollAborted
		return nil
	})
}

// DrainRollBatch starts the drains of batch Batch: every agent of it goes
// from pending to draining, StartedAt[id] its started_at now. Written with
// each agent's draining mark, in one Apply.
type DrainRollBatch struct {
	ID        string
	Batch     int
	StartedAt map[string]time.Time
	At        time.Time
}

func (DrainRollBatch) topic() Topic { return TopicFleet }

func (c DrainRollBatch) encode(v *view) ([]records.Record, error) {
	return v.rollTransition(c.ID, c.At, func(r *AgentRoll) error {
		if r.State != AgentRollRunning || r.Batch != c.Batch || c.Batch >= r.Batches() {
			return staleRoll(r, fmt.Sprintf("running at batch %d", c.Batch+1))
		}
		from, to := r.BatchRange(c.Batch)
		for i := from; i < to; i++ {
			a := &r.Agents[i]
			if a.Step != RollPending {
				return fmt.Errorf("%w: agent %s of roll %s is %s, not pending", ErrStale, a.ID, r.ID, a.Step)
			}
			a.Step, a.Since, a.StartedAt = RollDraining, c.At.UTC(), c.StartedAt[a.ID].UTC()
		}
		return nil
	})
}

// RollAgentDrained records that an agent's drain is done (Moved tasks
// moved off it): it waits for its restart from At.
type RollAgentDrained struct {
	ID    string
	Batch int
	Agent string
	Moved int
	At    time.Time
}

func (RollAgentDrained) topic() Topic { return TopicFleet }

func (c RollAgentDrained) encode(v *view) ([]records.Record, error) {
	return v.rollTransition(c.ID, c.At, func(r *AgentRoll) error {
		a, err := rollAgentIn(r, c.Batch, c.Agent, RollDraining)
		if err != nil {
			return err
		}
		a.Step, a.Since, a.Moved = RollWaitingRestart, c.At.UTC(), c.Moved
		return nil
	})
}

// RollAgentGone records that an agent was seen unregistered while it
// drains or waits for its restart.
type RollAgentGone struct {
	ID    string
	Batch int
	Agent string
	At    time.Time
}

func (RollAgentGone) topic() Topic { return TopicFleet }

func (c RollAgentGone) encode(v *view) ([]records.Record, error) {
	return v.rollTransition(c.ID, c.At, func(r *AgentRoll) error {
		a, err := rollAgentIn(r, c.Batch, c.Agent, RollDraining, RollWaitingRestart)
		if err != nil {
			return err
		}
		a.SeenGone = true
		return nil
	})
}

// RollAgentRestarted records that an agent came back restarted, with its
// new started_at and version: it is uncordoned next.
type RollAgentRestarted struct {
	ID        string
	Batch     int
	Agent     string
	StartedAt time.Time
	Version   string
	At        time.Time
}

func (RollAgentRestarted) topic() Topic { return TopicFleet }

func (c RollAgentRestarted) encode(v *view) ([]records.Record, error) {
	return v.rollTransition(c.ID, c.At, func(r *AgentRoll) error {
		a, err := rollAgentIn(r, c.Batch, c.Agent, RollWaitingRestart)
		if err != nil {
			return err
		}
		a.Step, a.Since, a.RestartedAt, a.Version = RollUncordoning, c.At.UTC(), c.StartedAt.UTC(), c.Version
		return nil
	})
}

// RollAgentDone records that an agent is uncordoned: written with its
// uncordon, in one Apply. The last agent of its batch moves the roll on
// to the next batch, and the last of all marks the roll done.
type RollAgentDone struct {
	ID    string
	Batch int
	Agent string
	At    time.Time
}

func (RollAgentDone) topic() Topic { return TopicFleet }

func (c RollAgentDone) encode(v *view) ([]records.Record, error) {
	return v.rollTransition(c.ID, c.At, func(r *AgentRoll) error {
		a, err := rollAgentIn(r, c.Batch, c.Agent, RollUncordoning)
		if err != nil {
			return err
		}
		a.Step, a.Since, a.FinishedAt = RollDone, c.At.UTC(), c.At.UTC()
		from, to := r.BatchRange(r.Batch)
		for i := from; i < to; i++ {
			if r.Agents[i].Step != RollDone {
				return nil
			}
		}
		r.Batch++
		if r.Batch >= r.Batches() {
			r.State = AgentRollDone
		}
		return nil
	})
}

// FailAgentRoll records that the roll failed at an agent of its batch,
// and why: the agent is left as it is (draining or cordoned).
type FailAgentRoll struct {
	ID    string
	Batch int
	Agent string
	Why   string
	At    time.Time
}

func (FailAgentRoll) topic() Topic { return TopicFleet }

func (c FailAgentRoll) encode(v *view) ([]records.Record, error) {
	return v.rollTransition(c.ID, c.At, func(r *AgentRoll) error {
		a, err := rollAgentIn(r, c.Batch, c.Agent, RollPending, RollDraining, RollWaitingRestart, RollUncordoning)
		if err != nil {
			return err
		}
		a.Step, a.Error, a.FinishedAt = RollFailed, c.Why, c.At.UTC()
		r.State, r.Error = AgentRollFailed, c.Why
		return nil
	})
}
