-- Lease up to ARGV[6] URLs, at most one per host; ARGV[7] hub percent; ARGV[8] lease seconds;
-- ARGV[9] how many expired leases, due retries and cooled hosts to move per call.
-- Returns a flat list: url id, 1 if hub else 0, ...
local count, hub_percent = tonumber(ARGV[6]), tonumber(ARGV[7])
local lease_seconds, limit = tonumber(ARGV[8]), tonumber(ARGV[9])
local touched = {}
local reclaimed, waiting_delta = 0, 0

-- 1. Leases past their deadline come back (a dead worker loses nothing).
for _, id in ipairs(redis.call('ZRANGEBYSCORE', K_PENDING, '-inf', fmt_time(NOW), 'LIMIT', 0, limit)) do
  local host, score = release(id)
  redis.call('HDEL', K_PARKED, id)
  if host then
    if score ~= 'hub' then
      enqueue(id, host, score)
      waiting_delta = waiting_delta + 1
    end
    reclaimed = reclaimed + 1
    touched[#touched + 1] = host
  end
end
-- 2. Retries whose backoff is over go back to their host's queue, in their old place.
for _, id in ipairs(redis.call('ZRANGEBYSCORE', K_DELAYED, '-inf', fmt_time(NOW), 'LIMIT', 0, limit)) do
  local host, score = split2(redis.call('HGET', K_PARKED, id))
  redis.call('ZREM', K_DELAYED, id)
  redis.call('HDEL', K_PARKED, id)
  if host then
    enqueue(id, host, score)
    touched[#touched + 1] = host
  end
end
-- 3. Hosts whose delay is over become fetchable.
for _, host in ipairs(redis.call('ZRANGEBYSCORE', K_COOLING, '-inf', fmt_time(NOW), 'LIMIT', 0, limit)) do
  touched[#touched + 1] = host
end
for _, host in ipairs(touched) do place(host) end

local out, used, served = {}, {}, {}
-- 4. Due hubs take up to hub_percent of the batch (at least one place when one is due).
if hub_percent > 0 and count > 0 then
  local slots = math.max(1, math.floor(count * hub_percent / 100))
  local taken = 0
  for _, id in ipairs(redis.call('ZRANGEBYSCORE', K_HUBS, '-inf', fmt_time(NOW), 'LIMIT', 0, slots * 4 + 16)) do
    if taken >= slots then break end
    local host, span = split2(redis.call('HGET', K_HUBINFO, id))
    if host and not used[host] and not redis.call('ZSCORE', K_PENDING, id) and eligible(host) then
      lease(id, host, 'hub', lease_seconds)
      redis.call('ZADD', K_HUBS, fmt_time(NOW + tonumber(span)), id)
      used[host] = true
      served[#served + 1] = host
      out[#out + 1] = id
      out[#out + 1] = 1
      taken = taken + 1
    end
  end
end
-- 5. Regular URLs: hosts in turn order, each served host goes to the back of the line.
local need = count - #out / 2
while need > 0 do
  local hosts = redis.call('ZRANGE', K_TURNS, 0, need - 1)
  if #hosts == 0 then break end
  for _, host in ipairs(hosts) do
    redis.call('ZREM', K_TURNS, host)
    if not used[host] then
      local popped = redis.call('ZPOPMIN', QPREFIX .. host)
      if #popped > 0 then
        lease(popped[1], host, popped[2], lease_seconds)
        waiting_delta = waiting_delta - 1
        out[#out + 1] = popped[1]
        out[#out + 1] = 0
        need = need - 1
      end
      used[host] = true
    end
    served[#served + 1] = host
  end
end
for _, host in ipairs(served) do place(host) end
if reclaimed > 0 then redis.call('HINCRBY', K_STATS, 'reclaimed', reclaimed) end
if waiting_delta ~= 0 then redis.call('HINCRBY', K_STATS, 'waiting', waiting_delta) end
return out
