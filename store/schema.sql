-- leaselab schema: the transactional outbox of the lesson, with the lease columns.
-- Times are TEXT in one fixed-width UTC form (2026-01-15T09:00:00.600Z), so that SQL compares
-- them exactly, as strings, and a workshop can read them in sqlite3.
CREATE TABLE Payments (
    Id             INTEGER PRIMARY KEY,
    IdempotencyKey TEXT    NOT NULL UNIQUE,
    Amount         INTEGER NOT NULL,            -- minor units (cents)
    PaymentStatus  TEXT    NOT NULL DEFAULT 'Pending'
                   CHECK (PaymentStatus IN ('Pending', 'Paid', 'Failed')),
    TransactionId  TEXT    NULL,                -- set by the provider, only when Paid
    CreatedAtUtc   TEXT    NOT NULL
);

CREATE TABLE OutboxMessages (
    Id             INTEGER PRIMARY KEY,
    IdempotencyKey TEXT    NOT NULL REFERENCES Payments (IdempotencyKey),
    Type           TEXT    NOT NULL,
    Payload        TEXT    NOT NULL,
    Status         TEXT    NOT NULL DEFAULT 'Pending'
                   CHECK (Status IN ('Pending', 'Processing') OR Status IN ('Processed', 'DeadLettered')),
    CreatedAtUtc   TEXT    NOT NULL,
    ProcessedAtUtc TEXT    NULL,
    LockedBy       TEXT    NULL,                -- the worker that holds (or last held) the lease
    LockedUntilUtc TEXT    NULL,                -- the lease ends after this instant
    Attempts       INTEGER NOT NULL DEFAULT 0,  -- claims that took this row
    LeaseVersion   INTEGER NOT NULL DEFAULT 0,  -- +1 on every claim: the fencing token
    NextAttemptUtc TEXT    NULL,                -- after a failed attempt: not claimable before this
    LastError      TEXT    NULL,                -- what the last failed attempt failed with
    -- A row is finished, out of every claim's way, exactly when it has a ProcessedAtUtc:
    -- Processed, or parked as a dead letter (DeadLettered, after its last allowed attempt).
    CHECK ((Status IN ('Processed', 'DeadLettered')) = (ProcessedAtUtc IS NOT NULL)),
    -- A row has a lease end exactly while it is Processing: OutboxMessages_Queue relies on it.
    CHECK ((Status = 'Processing') = (LockedUntilUtc IS NOT NULL))
);

-- The claim's index. The claim takes the oldest claimable row: the oldest Pending row, or the
-- oldest row whose lease has ended, whichever is older; a due claim (retry backoff on) takes a
-- Pending row only once it never failed or its backoff is over. One index holds every unfinished
-- row by what it waits for: a lease by the instant it ends (LockedUntilUtc), a Pending row by the
-- end of its backoff (NextAttemptUtc; none for a row that never failed, and those come first),
-- then in claim order. The leases come first (Status DESC), so the newest lease sits next to the
-- oldest Pending row: a claim moves a row's entry from one side of that boundary to the other,
-- usually within one page, and a finalize takes it out. A claim reads the first entries of the
-- Pending rows that never failed and of the ended leases, and never walks the live leases (a
-- crashed worker's row stays Processing until its lease ends; a run with many crashes and a clock
-- that does not move holds thousands), nor the rows still waiting for their backoff to end. The
-- reads name the index's expression, coalesce(LockedUntilUtc, NextAttemptUtc), as it stands here.
CREATE INDEX OutboxMessages_Queue
    ON OutboxMessages (Status DESC, coalesce(LockedUntilUtc, NextAttemptUtc), CreatedAtUtc)
 WHERE ProcessedAtUtc IS NULL;

-- The Pending rows that failed, in claim order: what a claim that does not honour the backoff
-- reads besides the rows that never failed. A row that never failed is never in it, so a claim
-- and a finalize of one leave it alone.
CREATE INDEX OutboxMessages_Retried
    ON OutboxMessages (CreatedAtUtc) WHERE Status = 'Pending' AND NextAttemptUtc IS NOT NULL;

CREATE INDEX OutboxMessages_Key ON OutboxMessages (IdempotencyKey);
