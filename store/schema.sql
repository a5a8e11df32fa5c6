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
                   CHECK (Status IN ('Pending', 'Processing', 'Processed', 'DeadLettered')),
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
    CHECK ((Status IN ('Processed', 'DeadLettered')) = (ProcessedAtUtc IS NOT NULL))
);

-- The claim's two indexes. The claim takes the oldest claimable row: the oldest Pending row, or
-- the oldest row whose lease has ended, whichever is older. Pending rows are kept in claim order,
-- so the oldest is the first entry. Leases are kept in the order they end, then claim order: the
-- ended ones come first, and the first entry of each instant is the oldest row whose lease ended
-- then. So a claim reads a few entries whatever the backlog, and never walks the live leases
-- (a crashed worker's row stays Processing until its lease ends; a run with many crashes and a
-- clock that does not move holds thousands).
CREATE INDEX OutboxMessages_Pending
    ON OutboxMessages (CreatedAtUtc) WHERE Status = 'Pending';
CREATE INDEX OutboxMessages_Leases
    ON OutboxMessages (LockedUntilUtc, CreatedAtUtc) WHERE Status = 'Processing';

-- The due claim's two indexes (retry backoff on). A due claim takes the oldest row it may: the
-- oldest Pending row that never failed, the oldest whose backoff is over, or the oldest ended
-- lease. Pending rows that never failed are kept in claim order, apart from the rows that
-- failed, which are kept in the order their backoff ends: so a due claim reads the first entry
-- of the one and the rows whose backoff is over of the other, and never walks the rows still
-- waiting for their next attempt, however many there are.
CREATE INDEX OutboxMessages_Fresh
    ON OutboxMessages (CreatedAtUtc) WHERE Status = 'Pending' AND NextAttemptUtc IS NULL;
CREATE INDEX OutboxMessages_Backoff
    ON OutboxMessages (NextAttemptUtc, CreatedAtUtc) WHERE Status = 'Pending' AND NextAttemptUtc IS NOT NULL;

CREATE INDEX OutboxMessages_Key ON OutboxMessages (IdempotencyKey);
