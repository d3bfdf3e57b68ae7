-- Prelude shared by every frontier script (prepended by frontier/scripts.py).
-- KEYS: 1 turns, 2 cooling, 3 pending, 4 parked, 5 delayed, 6 hubs, 7 hubinfo, 8 inflight,
--       9 nextok, 10 hostdelay, 11 why, 12 stats, 13 hosts   (all share the pool's hash tag)
-- ARGV: 1 per-host queue key prefix, 2 now (seconds), 3 max in flight per host,
--       4 pool crawl delay (seconds), 5 queue order within a priority ("fifo" or "lifo");
--       each script's own arguments start at ARGV[6].
-- Per-host queues (QPREFIX .. host) are derived here, in the same hash tag, so every key a
-- script touches lives in one cluster slot.
local K_TURNS, K_COOLING, K_PENDING, K_PARKED = KEYS[1], KEYS[2], KEYS[3], KEYS[4]
local K_DELAYED, K_HUBS, K_HUBINFO, K_INFLIGHT = KEYS[5], KEYS[6], KEYS[7], KEYS[8]
local K_NEXTOK, K_HOSTDELAY, K_WHY, K_STATS, K_HOSTS = KEYS[9], KEYS[10], KEYS[11], KEYS[12], KEYS[13]
local QPREFIX = ARGV[1]
local NOW = tonumber(ARGV[2])
local MAX_INFLIGHT = tonumber(ARGV[3])
local CRAWL_DELAY = tonumber(ARGV[4])
local LIFO = ARGV[5] == 'lifo'

-- Lua's own number formatting keeps 14 digits; scores and times need all of theirs (%.17g
-- round-trips a double exactly, so a time written now never reads back as later than now).
local function fmt_time(t) return string.format('%.17g', t) end
local function num(value, default)
  if value then return tonumber(value) end
  return default
end

local function split2(text)
  if not text then return nil end
  local a, b = string.match(text, '^(%S+) (%S+)$')
  return a, b
end

-- Put a host where it belongs: fetchable now (turns), cooling until its next allowed time,
-- or nowhere (no waiting URL, or as many leases as it may have).
local function place(host)
  local waiting = redis.call('ZCARD', QPREFIX .. host)
  local inflight = num(redis.call('HGET', K_INFLIGHT, host), 0)
  if waiting == 0 or inflight >= MAX_INFLIGHT then
    redis.call('ZREM', K_TURNS, host)
    redis.call('ZREM', K_COOLING, host)
    return
  end
  local nextok = num(redis.call('HGET', K_NEXTOK, host), 0)
  if nextok > NOW then
    redis.call('ZREM', K_TURNS, host)
    redis.call('ZADD', K_COOLING, fmt_time(nextok), host)
    return
  end
  redis.call('ZREM', K_COOLING, host)
  if not redis.call('ZSCORE', K_TURNS, host) then
    redis.call('ZADD', K_TURNS, redis.call('HINCRBY', K_STATS, 'turn', 1), host)
  end
end

local function eligible(host)
  return num(redis.call('HGET', K_INFLIGHT, host), 0) < MAX_INFLIGHT
    and num(redis.call('HGET', K_NEXTOK, host), 0) <= NOW
end

-- Hold a host back until `t` (never shortens an existing hold).
local function hold_until(host, t, why)
  if t > num(redis.call('HGET', K_NEXTOK, host), 0) then
    redis.call('HSET', K_NEXTOK, host, fmt_time(t))
    redis.call('HSET', K_WHY, host, why)
  end
end

local function lease(id, host, score, lease_seconds)
  redis.call('ZADD', K_PENDING, fmt_time(NOW + lease_seconds), id)
  redis.call('HSET', K_PARKED, id, host .. ' ' .. score)
  redis.call('HINCRBY', K_INFLIGHT, host, 1)
end

-- End the lease of `id` if it has one: the host gets its slot back and waits its crawl delay.
-- Returns host, score (score is 'hub' for hubs), or nil when `id` was not leased.
local function release(id)
  if redis.call('ZREM', K_PENDING, id) == 0 then return nil end
  local host, score = split2(redis.call('HGET', K_PARKED, id))
  if not host then return nil end  -- a lease without its record: nothing to give back
  if redis.call('HINCRBY', K_INFLIGHT, host, -1) <= 0 then redis.call('HDEL', K_INFLIGHT, host) end
  local delay = num(redis.call('HGET', K_HOSTDELAY, host), 0)
  if delay > CRAWL_DELAY then
    hold_until(host, NOW + delay, 'robots crawl-delay')
  else
    hold_until(host, NOW + CRAWL_DELAY, 'crawl delay')
  end
  return host, score
end

local function enqueue(id, host, score)
  local added = redis.call('ZADD', QPREFIX .. host, 'NX', score, id)
  redis.call('SADD', K_HOSTS, host)
  return added
end

-- Queue score: priority band (higher priority first), then arrival order within the band.
local function next_score(priority)
  local seq = redis.call('HINCRBY', K_STATS, 'seq', 1)
  if LIFO then seq = 1e12 - seq end
  return string.format('%.0f', (1000 - tonumber(priority)) * 1e12 + seq)
end
