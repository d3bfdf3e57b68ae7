-- Queue new URLs. ARGV[6] counter to decrement per URL queued ("" for none: used when a forced
-- re-crawl turns a succeeded/failed URL back into a waiting one); ARGV[7] rejected and ARGV[8]
-- duplicate adds to count; then triples: url id, host, priority (-999..999).
-- Returns how many were queued.
local from_counter = ARGV[6]
redis.call('HINCRBY', K_STATS, 'rejected', ARGV[7])
redis.call('HINCRBY', K_STATS, 'duplicates', ARGV[8])
local added, hosts, seen = 0, {}, {}
for i = 9, #ARGV, 3 do
  local id, host = ARGV[i], ARGV[i + 1]
  added = added + enqueue(id, host, next_score(ARGV[i + 2]))
  if not seen[host] then seen[host] = true; hosts[#hosts + 1] = host end
end
redis.call('HINCRBY', K_STATS, 'waiting', added)
if from_counter ~= '' then redis.call('HINCRBY', K_STATS, from_counter, -added) end
for _, host in ipairs(hosts) do place(host) end
return added
