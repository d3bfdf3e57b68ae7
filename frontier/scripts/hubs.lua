-- Replace the pool's hubs. ARGV[6] how many hub entries follow as groups of 4: url id, host,
-- refresh span (a new hub is due now; an existing one keeps its due time unless the new span
-- brings it closer), the counter it leaves ("succeeded"/"failed" for a done URL, else "");
-- then groups of 3 for former hubs: url id, host, priority to queue it with ("" = not queued:
-- it was fetched already, and counts as succeeded). A hub's URL leaves the regular queues.
local n = tonumber(ARGV[6])
local i = 7
local hosts, seen = {}, {}
local function touch(host)
  if not seen[host] then seen[host] = true; hosts[#hosts + 1] = host end
end
for _ = 1, n do
  local id, host, span, was = ARGV[i], ARGV[i + 1], tonumber(ARGV[i + 2]), ARGV[i + 3]
  i = i + 4
  if was ~= '' then redis.call('HINCRBY', K_STATS, was, -1) end
  local due = NOW
  local current = redis.call('ZSCORE', K_HUBS, id)
  if current then due = math.min(tonumber(current), NOW + span) end
  redis.call('ZADD', K_HUBS, fmt_time(due), id)
  redis.call('HSET', K_HUBINFO, id, host .. ' ' .. string.format('%.17g', span))
  if redis.call('ZREM', QPREFIX .. host, id) == 1 then
    redis.call('HINCRBY', K_STATS, 'waiting', -1)
  elseif redis.call('ZREM', K_DELAYED, id) == 1 then
    redis.call('HDEL', K_PARKED, id)
    redis.call('HINCRBY', K_STATS, 'waiting', -1)
  end
  touch(host)
end
while i + 2 <= #ARGV do
  local id, host, priority = ARGV[i], ARGV[i + 1], ARGV[i + 2]
  i = i + 3
  redis.call('ZREM', K_HUBS, id)
  redis.call('HDEL', K_HUBINFO, id)
  if priority == '' then
    redis.call('HINCRBY', K_STATS, 'succeeded', 1)
  elseif not redis.call('ZSCORE', K_PENDING, id) then
    redis.call('HINCRBY', K_STATS, 'waiting', enqueue(id, host, next_score(priority)))
  end
  touch(host)
end
for _, host in ipairs(hosts) do place(host) end
return n
