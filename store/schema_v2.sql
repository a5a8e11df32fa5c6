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
                   CHECK (Status IN ('Pending', 'Processing', 'Processed')),
    CreatedAtUtc   TEXT    NOT NULL,
    ProcessedAtUtc TEXT    NULL,
    LockedBy       TEXT    NULL,                -- the worker that holds (or last held) the lease
    LockedUntilUtc TEXT    NULL,                -- the lease ends after this instant
    Attempts       INTEGER NOT NULL DEFAULT 0,  -- claims that took this row
    LeaseVersion   INTEGER NOT NULL DEFAULT 0,  -- +1 on every claim: the fencing token
    -- A row is finished exactly when it has a ProcessedAtUtc: the claim's index relies on it.
    CHECK ((Status = 'Processed') = (ProcessedAtUtc IS NOT NULL))
);

-- The claim's index: a partial index over unfinished rows, in claim order. The claim's WHERE
-- repeats this index's condition word for word, so SQLite walks it in order and stops at the
-- first claimable row, whatever the backlog. The condition is on ProcessedAtUtc, not Status:
-- the claim changes Status (Pending -> Processing) but neither column of this index, so SQLite
-- leaves the index alone and a claim writes one page (the row's), not two. Only the finalize,
-- which sets ProcessedAtUtc, takes the row out of the index.
CREATE INDEX OutboxMessages_Claimable
    ON OutboxMessages (CreatedAtUtc) WHERE ProcessedAtUtc IS NULL;

CREATE INDEX OutboxMessages_Key ON OutboxMessages (IdempotencyKey);
