-- Rebuild from SQL, one chunk of rows in id (arrival) order. ARGV[6..]: groups of 4: url id,
-- host, kind, value. kind "queue": value is the priority; "retry": value is "due priority";
-- "hub": value is "due span". Ids under a live lease are skipped. Returns how many were scheduled.
local scheduled = 0
local hosts, seen = {}, {}
for i = 6, #ARGV, 4 do
  local id, host, kind, value = ARGV[i], ARGV[i + 1], ARGV[i + 2], ARGV[i + 3]
  if not redis.call('ZSCORE', K_PENDING, id) then
    if kind == 'queue' then
      local added = enqueue(id, host, next_score(value))
      redis.call('HINCRBY', K_STATS, 'waiting', added)
      scheduled = scheduled + added
    elseif kind == 'retry' then
      local due, priority = split2(value)
      if redis.call('ZADD', K_DELAYED, 'NX', due, id) == 1 then
        redis.call('HSET', K_PARKED, id, host .. ' ' .. next_score(priority))
        redis.call('SADD', K_HOSTS, host)
        redis.call('HINCRBY', K_STATS, 'waiting', 1)
        scheduled = scheduled + 1
      end
    else
      local due, span = split2(value)
      redis.call('ZADD', K_HUBS, 'NX', due, id)
      redis.call('HSET', K_HUBINFO, id, host .. ' ' .. span)
      scheduled = scheduled + 1
    end
    if not seen[host] then seen[host] = true; hosts[#hosts + 1] = host end
  end
end
for _, host in ipairs(hosts) do place(host) end
return scheduled
