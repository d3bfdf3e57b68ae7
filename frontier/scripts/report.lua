-- Record fetch outcomes. ARGV[6..]: groups of 5: url id, host, kind, retry due time, host hold
-- seconds (0 = none). kind: "succeeded" | "failed" (now permanent), "retry" (back after the due
-- time), "hub" (stays a hub), "late" (already permanent in SQL: only clean up), "back" (not
-- fetched after all: back to its place in the queue, no attempt counted).
-- Returns how many reports ended a live lease.
local ended = 0
local counts = {waiting = 0, succeeded = 0, failed = 0}
local hosts, seen = {}, {}
for i = 6, #ARGV, 5 do
  local id, host, kind = ARGV[i], ARGV[i + 1], ARGV[i + 2]
  local due, hold = tonumber(ARGV[i + 3]), tonumber(ARGV[i + 4])
  local _, score = release(id)
  if score then ended = ended + 1 end
  if kind == 'back' then
    if score then
      redis.call('HDEL', K_PARKED, id)
      if score ~= 'hub' then
        enqueue(id, host, score)
        counts.waiting = counts.waiting + 1
      else
        redis.call('ZADD', K_HUBS, fmt_time(NOW), id)
      end
    end
  elseif kind == 'retry' then
    if score then
      redis.call('ZADD', K_DELAYED, fmt_time(due), id)
      counts.waiting = counts.waiting + 1
    end
  elseif kind == 'hub' then
    if score then redis.call('HDEL', K_PARKED, id) end
  else
    if score then
      redis.call('HDEL', K_PARKED, id)
    elseif redis.call('ZREM', QPREFIX .. host, id) == 1 then
      counts.waiting = counts.waiting - 1
    elseif redis.call('ZREM', K_DELAYED, id) == 1 then
      redis.call('HDEL', K_PARKED, id)
      counts.waiting = counts.waiting - 1
    end
    if kind ~= 'late' then counts[kind] = counts[kind] + 1 end
  end
  if hold > 0 then hold_until(host, NOW + hold, 'backoff') end
  if not seen[host] then seen[host] = true; hosts[#hosts + 1] = host end
end
for _, host in ipairs(hosts) do place(host) end
for name, delta in pairs(counts) do
  if delta ~= 0 then redis.call('HINCRBY', K_STATS, name, delta) end
end
return ended
