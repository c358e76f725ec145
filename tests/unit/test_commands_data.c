/* test_commands_data.c - the data commands (strings, keyspace, hashes,
 * sorted sets) and the connection and transaction commands run as
 * scripts: each step's reply was checked byte for byte against Redis
 * 7.0.15 (steps where Redis answers otherwise on purpose -- key order,
 * random picks, shortest double text, 7.2 features -- are left out). The
 * steps of a script run in order on one session, so they share state. */
#include "test_commands_util.h"

struct script_step {
    const char *cmd;   /* words split at spaces */
    const char *reply; /* the exact reply bytes */
};

static const struct script_step strings_script[] = {
    {"set a b ex 10 px 100", "-ERR syntax error\r\n"},
    {"set a b nx xx", "-ERR syntax error\r\n"},
    {"set a b get nx", "$-1\r\n"},
    {"set a b keepttl ex 1", "-ERR syntax error\r\n"},
    {"set a b ex 0", "-ERR invalid expire time in 'set' command\r\n"},
    {"set a b ex -1", "-ERR invalid expire time in 'set' command\r\n"},
    {"set a b ex abc", "-ERR value is not an integer or out of range\r\n"},
    {"set a b exat 0", "-ERR invalid expire time in 'set' command\r\n"},
    {"set a b px 9223372036854775807",
     "-ERR invalid expire time in 'set' command\r\n"},
    {"set a b ex 9223372036854775807",
     "-ERR invalid expire time in 'set' command\r\n"},
    {"incr a", "-ERR value is not an integer or out of range\r\n"},
    {"incrbyfloat a x", "-ERR value is not a valid float\r\n"},
    {"get a", "$1\r\nb\r\n"},
    {"set k v", "+OK\r\n"},
    {"set k v get", "$1\r\nv\r\n"},
    {"set k w get get", "$1\r\nv\r\n"},
    {"get k", "$1\r\nw\r\n"},
    {"set k v nx nx", "$-1\r\n"},
    {"set k v keepttl keepttl", "+OK\r\n"},
    {"getex k ex 10 px 10", "-ERR syntax error\r\n"},
    {"getex k persist ex 1", "-ERR syntax error\r\n"},
    {"getex k foo", "-ERR syntax error\r\n"},
    {"getex k ex 0", "-ERR invalid expire time in 'getex' command\r\n"},
    {"getex k ex x", "-ERR value is not an integer or out of range\r\n"},
    {"getex k persist persist", "$1\r\nv\r\n"},
    {"getex nokey ex x", "$-1\r\n"},
    {"getex k ex", "-ERR syntax error\r\n"},
    {"ttl k", ":-1\r\n"},
    {"getex k ex 100", "$1\r\nv\r\n"},
    {"ttl k", ":100\r\n"},
    {"getex k persist", "$1\r\nv\r\n"},
    {"ttl k", ":-1\r\n"},
    {"setex k 0 v", "-ERR invalid expire time in 'setex' command\r\n"},
    {"setex k x v", "-ERR value is not an integer or out of range\r\n"},
    {"psetex k -1 v", "-ERR invalid expire time in 'psetex' command\r\n"},
    {"setex k 100 v", "+OK\r\n"},
    {"ttl k", ":100\r\n"},
    {"setrange k -1 x", "-ERR offset is out of range\r\n"},
    {"setrange k x x", "-ERR value is not an integer or out of range\r\n"},
    {"setrange k 5 xyz", ":8\r\n"},
    {"get k", "$8\r\nv\x00\x00\x00\x00xyz\r\n"},
    {"getrange k a b", "-ERR value is not an integer or out of range\r\n"},
    {"getrange k 0 x", "-ERR value is not an integer or out of range\r\n"},
    {"getrange k 0 -1", "$8\r\nv\x00\x00\x00\x00xyz\r\n"},
    {"getrange k -3 -1", "$3\r\nxyz\r\n"},
    {"getrange nokey 0 -1", "$0\r\n\r\n"},
    {"substr k 0 2", "$3\r\nv\x00\x00\r\n"},
    {"incrby k x", "-ERR value is not an integer or out of range\r\n"},
    {"decrby k -9223372036854775808", "-ERR decrement would overflow\r\n"},
    {"incrbyfloat k inf", "-ERR value is not a valid float\r\n"},
    {"set n 1", "+OK\r\n"},
    {"incrbyfloat n abc", "-ERR value is not a valid float\r\n"},
    {"incrbyfloat n 1.5", "$3\r\n2.5\r\n"},
    {"incrbyfloat n 1e400",
     "$401\r\n100000000000000000002818806839475865145864534336290520386259"
     "10693539685534008629862039363994848324160522094053927317616200295822"
     "77725925573402382897659334066101779744743454617391786244811667497172"
     "37789438243915933380474706750262466844013592375136038303437354855052"
     "44955964979021825038280091068414947402456898653040951017512658092615"
     "82758892018347251164331659136266413817630973480634373249743022194688"
     "0\r\n"},
    {"set n 10", "+OK\r\n"},
    {"incr n", ":11\r\n"},
    {"decr n", ":10\r\n"},
    {"incrby n 5", ":15\r\n"},
    {"decrby n 20", ":-5\r\n"},
    {"incrby n 9223372036854775807", ":9223372036854775802\r\n"},
    {"set n 9223372036854775807", "+OK\r\n"},
    {"incr n", "-ERR increment or decrement would overflow\r\n"},
    {"mset a", "-ERR wrong number of arguments for 'mset' command\r\n"},
    {"mset a 1 b", "-ERR wrong number of arguments for 'mset' command\r\n"},
    {"msetnx a 1 b",
     "-ERR wrong number of arguments for 'msetnx' command\r\n"},
    {"mset a 1 b 2", "+OK\r\n"},
    {"mget a b c", "*3\r\n$1\r\n1\r\n$1\r\n2\r\n$-1\r\n"},
    {"msetnx a 1 c 3", ":0\r\n"},
    {"msetnx c 3 d 4", ":1\r\n"},
    {"mget c d", "*2\r\n$1\r\n3\r\n$1\r\n4\r\n"},
    {"append k x", ":9\r\n"},
    {"append newk hello", ":5\r\n"},
    {"strlen newk", ":5\r\n"},
    {"strlen nokey", ":0\r\n"},
    {"set k 1 nx ex 0", "-ERR invalid expire time in 'set' command\r\n"},
    {"set k 1 keepttl", "+OK\r\n"},
    {"setrange k 536870912 x",
     "-ERR string exceeds maximum allowed size (proto-max-bulk-len)\r\n"},
    {"getset k new", "$1\r\n1\r\n"},
    {"getset nokey2 v", "$-1\r\n"},
    {"getdel k", "$3\r\nnew\r\n"},
    {"getdel k", "$-1\r\n"},
    {"setnx k a", ":1\r\n"},
    {"setnx k b", ":0\r\n"},
    {"hset h f v", ":1\r\n"},
    {"get h",
     "-WRONGTYPE Operation against a key holding the wrong kind of value\r"
     "\n"},
    {"getset h x",
     "-WRONGTYPE Operation against a key holding the wrong kind of value\r"
     "\n"},
    {"getdel h",
     "-WRONGTYPE Operation against a key holding the wrong kind of value\r"
     "\n"},
    {"append h x",
     "-WRONGTYPE Operation against a key holding the wrong kind of value\r"
     "\n"},
    {"strlen h",
     "-WRONGTYPE Operation against a key holding the wrong kind of value\r"
     "\n"},
    {"incr h",
     "-WRONGTYPE Operation against a key holding the wrong kind of value\r"
     "\n"},
    {"set h x get",
     "-WRONGTYPE Operation against a key holding the wrong kind of value\r"
     "\n"},
    {"set h x", "+OK\r\n"},
    {"type h", "+string\r\n"},
};

static const struct script_step keys_script[] = {
    {"set a 1", "+OK\r\n"},
    {"set b 2", "+OK\r\n"},
    {"hset h f v", ":1\r\n"},
    {"zadd z 1 m", ":1\r\n"},
    {"del a nokey b", ":2\r\n"},
    {"exists a h z h", ":3\r\n"},
    {"touch h z nope", ":2\r\n"},
    {"type h", "+hash\r\n"},
    {"type z", "+zset\r\n"},
    {"type nope", "+none\r\n"},
    {"set a 1", "+OK\r\n"},
    {"rename a b", "+OK\r\n"},
    {"get b", "$1\r\n1\r\n"},
    {"rename nope x", "-ERR no such key\r\n"},
    {"renamenx nope x", "-ERR no such key\r\n"},
    {"set c 3", "+OK\r\n"},
    {"renamenx b c", ":0\r\n"},
    {"renamenx b b", ":0\r\n"},
    {"rename b b", "+OK\r\n"},
    {"keys h*", "*1\r\n$1\r\nh\r\n"},
    {"keys [hz]", "*2\r\n$1\r\nz\r\n$1\r\nh\r\n"},
    {"dbsize", ":4\r\n"},
    {"randomkey", "$1\r\nc\r\n"},
    {"scan x", "-ERR invalid cursor\r\n"},
    {"scan 18446744073709551616", "-ERR invalid cursor\r\n"},
    {"scan 0 count 0", "-ERR syntax error\r\n"},
    {"scan 0 count x", "-ERR value is not an integer or out of range\r\n"},
    {"scan 0 match", "-ERR syntax error\r\n"},
    {"scan 0 foo bar", "-ERR syntax error\r\n"},
    {"scan 0 type foo", "*2\r\n$1\r\n0\r\n*0\r\n"},
    {"scan 0 type hash", "*2\r\n$1\r\n0\r\n*1\r\n$1\r\nh\r\n"},
    {"scan 0 match h* count 100", "*2\r\n$1\r\n0\r\n*1\r\n$1\r\nh\r\n"},
    {"flushall foo", "-ERR syntax error\r\n"},
    {"flushall async x", "-ERR syntax error\r\n"},
    {"expire a 10 foo", "-ERR Unsupported option foo\r\n"},
    {"expire a 10 nx xx",
     "-ERR NX and XX, GT or LT options at the same time are not compatible"
     "\r\n"},
    {"expire a 10 gt lt",
     "-ERR GT and LT options at the same time are not compatible\r\n"},
    {"expire a x", "-ERR value is not an integer or out of range\r\n"},
    {"expire h 9223372036854775807",
     "-ERR invalid expire time in 'expire' command\r\n"},
    {"expire h 100", ":1\r\n"},
    {"ttl h", ":100\r\n"},
    {"pttl nope", ":-2\r\n"},
    {"ttl nope", ":-2\r\n"},
    {"ttl z", ":-1\r\n"},
    {"expire h 100 nx", ":0\r\n"},
    {"expire h 200 xx", ":1\r\n"},
    {"expire h 50 gt", ":0\r\n"},
    {"expire h 50 lt", ":1\r\n"},
    {"ttl h", ":50\r\n"},
    {"persist h", ":1\r\n"},
    {"persist h", ":0\r\n"},
    {"ttl h", ":-1\r\n"},
    {"expireat h 1", ":1\r\n"},
    {"exists h", ":0\r\n"},
    {"pexpire z 100000", ":1\r\n"},
    {"pexpiretime nope", ":-2\r\n"},
    {"expiretime c", ":-1\r\n"},
    {"object encoding z", "$8\r\nlistpack\r\n"},
    {"object encoding c", "$3\r\nint\r\n"},
    {"object encoding nope", "$-1\r\n"},
    {"object freq c",
     "-ERR An LFU maxmemory policy is not selected, access frequency not t"
     "racked. Please note that when switching between policies at runtime "
     "LRU and LFU data will take some time to adjust.\r\n"},
    {"object freq nope", "$-1\r\n"},
    {"object idletime nope", "$-1\r\n"},
    {"object refcount nope", "$-1\r\n"},
    {"object foo", "-ERR unknown subcommand 'foo'. Try OBJECT HELP.\r\n"},
    {"object help",
     "*15\r\n+OBJECT <subcommand> [<arg> [value] [opt] ...]. Subcommands a"
     "re:\r\n+ENCODING <key>\r\n+    Return the kind of internal represent"
     "ation used in order to store the value\r\n+    associated with a <ke"
     "y>.\r\n+FREQ <key>\r\n+    Return the access frequency index of the "
     "<key>. The returned integer is\r\n+    proportional to the logarithm"
     " of the recent access frequency of the key.\r\n+IDLETIME <key>\r\n+ "
     "   Return the idle time of the <key>, that is the approximated numbe"
     "r of\r\n+    seconds elapsed since the last access to the key.\r\n+R"
     "EFCOUNT <key>\r\n+    Return the number of references of the value a"
     "ssociated with the specified\r\n+    <key>.\r\n+HELP\r\n+    Prints "
     "this help.\r\n"},
    {"object encoding",
     "-ERR wrong number of arguments for 'object|encoding' command\r\n"},
    {"flushdb sync", "+OK\r\n"},
    {"dbsize", ":0\r\n"},
    {"randomkey", "$-1\r\n"},
    {"set x 12345", "+OK\r\n"},
    {"object encoding x", "$3\r\nint\r\n"},
    {"set y abc", "+OK\r\n"},
    {"object encoding y", "$6\r\nembstr\r\n"},
};

static const struct script_step hash_script[] = {
    {"hset h a 1 b", "-ERR wrong number of arguments for 'hset' command\r\n"},
    {"hmset h a", "-ERR wrong number of arguments for 'hmset' command\r\n"},
    {"hset h a 1 b 2", ":2\r\n"},
    {"hmset h c 3", "+OK\r\n"},
    {"hsetnx h a x", ":0\r\n"},
    {"hsetnx h d 4", ":1\r\n"},
    {"hget h a", "$1\r\n1\r\n"},
    {"hget h nope", "$-1\r\n"},
    {"hget nope a", "$-1\r\n"},
    {"hmget h a nope b", "*3\r\n$1\r\n1\r\n$-1\r\n$1\r\n2\r\n"},
    {"hmget nope a", "*1\r\n$-1\r\n"},
    {"hdel h a nope", ":1\r\n"},
    {"hdel nope a", ":0\r\n"},
    {"hlen h", ":3\r\n"},
    {"hlen nope", ":0\r\n"},
    {"hexists h b", ":1\r\n"},
    {"hexists h a", ":0\r\n"},
    {"hstrlen h b", ":1\r\n"},
    {"hstrlen h nope", ":0\r\n"},
    {"hgetall h",
     "*6\r\n$1\r\nb\r\n$1\r\n2\r\n$1\r\nc\r\n$1\r\n3\r\n$1\r\nd\r\n$1\r\n4"
     "\r\n"},
    {"hkeys h", "*3\r\n$1\r\nb\r\n$1\r\nc\r\n$1\r\nd\r\n"},
    {"hvals h", "*3\r\n$1\r\n2\r\n$1\r\n3\r\n$1\r\n4\r\n"},
    {"hgetall nope", "*0\r\n"},
    {"hincrby h a x", "-ERR value is not an integer or out of range\r\n"},
    {"hset h s abc", ":1\r\n"},
    {"hincrby h s 1", "-ERR hash value is not an integer\r\n"},
    {"hincrbyfloat h s 1", "-ERR hash value is not a float\r\n"},
    {"hincrbyfloat h a inf", "-ERR value is NaN or Infinity\r\n"},
    {"hincrbyfloat h a x", "-ERR value is not a valid float\r\n"},
    {"hincrby h n 5", ":5\r\n"},
    {"hincrby h n -7", ":-2\r\n"},
    {"hincrbyfloat h f 1.5", "$3\r\n1.5\r\n"},
    {"hincrbyfloat h f 0.1", "$3\r\n1.6\r\n"},
    {"hset h big 9223372036854775807", ":1\r\n"},
    {"hincrby h big 1", "-ERR increment or decrement would overflow\r\n"},
    {"hrandfield h x", "-ERR value is not an integer or out of range\r\n"},
    {"hrandfield h -9223372036854775808",
     "-ERR value is out of range, value must between -9223372036854775807 "
     "and 9223372036854775807\r\n"},
    {"hrandfield h -9223372036854775807 withvalues",
     "-ERR value is out of range\r\n"},
    {"hrandfield h 1 withvalues x", "-ERR syntax error\r\n"},
    {"hrandfield h 1 foo", "-ERR syntax error\r\n"},
    {"hrandfield nope", "$-1\r\n"},
    {"hrandfield nope 3", "*0\r\n"},
    {"hrandfield h 0", "*0\r\n"},
    {"hscan h 0 type string", "-ERR syntax error\r\n"},
    {"hscan h 0 count 0", "-ERR syntax error\r\n"},
    {"hscan nope x", "-ERR invalid cursor\r\n"},
    {"hscan nope 0", "*2\r\n$1\r\n0\r\n*0\r\n"},
    /* Redis 7.4's NOVALUES is a word alone; COUNT still needs its value. */
    {"hscan h 0 novalues count", "-ERR syntax error\r\n"},
    {"hscan h x", "-ERR invalid cursor\r\n"},
    {"set s x", "+OK\r\n"},
    {"hget s a",
     "-WRONGTYPE Operation against a key holding the wrong kind of value\r"
     "\n"},
    {"hrandfield s",
     "-WRONGTYPE Operation against a key holding the wrong kind of value\r"
     "\n"},
    {"hscan s 0",
     "-WRONGTYPE Operation against a key holding the wrong kind of value\r"
     "\n"},
    {"hscan s 0 foo",
     "-WRONGTYPE Operation against a key holding the wrong kind of value\r"
     "\n"},
    {"hgetall s",
     "-WRONGTYPE Operation against a key holding the wrong kind of value\r"
     "\n"},
    {"hset s a b",
     "-WRONGTYPE Operation against a key holding the wrong kind of value\r"
     "\n"},
    {"del h", ":1\r\n"},
    {"hset h a 1", ":1\r\n"},
    {"hrandfield h", "$1\r\na\r\n"},
    {"hrandfield h 1", "*1\r\n$1\r\na\r\n"},
    {"hrandfield h 5 withvalues", "*2\r\n$1\r\na\r\n$1\r\n1\r\n"},
    {"hrandfield h -2", "*2\r\n$1\r\na\r\n$1\r\na\r\n"},
    {"hscan h 0", "*2\r\n$1\r\n0\r\n*2\r\n$1\r\na\r\n$1\r\n1\r\n"},
    {"hscan h 0 match a*", "*2\r\n$1\r\n0\r\n*2\r\n$1\r\na\r\n$1\r\n1\r\n"},
};

static const struct script_step zset_script[] = {
    {"zadd z", "-ERR wrong number of arguments for 'zadd' command\r\n"},
    {"zadd z 1", "-ERR wrong number of arguments for 'zadd' command\r\n"},
    {"zadd z x a", "-ERR value is not a valid float\r\n"},
    {"zadd z nx", "-ERR wrong number of arguments for 'zadd' command\r\n"},
    {"zadd z ch 1 a 2", "-ERR syntax error\r\n"},
    {"zadd z incr 1 a", "$1\r\n1\r\n"},
    {"zadd z xx incr 1 b", "$-1\r\n"},
    {"zadd z foo 1 a", "-ERR syntax error\r\n"},
    {"zincrby z x a", "-ERR value is not a valid float\r\n"},
    {"zadd z 1 b 2 c", ":2\r\n"},
    {"zadd z nx xx 1 a",
     "-ERR XX and NX options at the same time are not compatible\r\n"},
    {"zadd z gt lt 1 a",
     "-ERR GT, LT, and/or NX options at the same time are not compatible\r"
     "\n"},
    {"zadd z gt nx 1 a",
     "-ERR GT, LT, and/or NX options at the same time are not compatible\r"
     "\n"},
    {"zadd z incr 1 a 2 b",
     "-ERR INCR option supports a single increment-element pair\r\n"},
    {"zadd z 1 a a", "-ERR syntax error\r\n"},
    {"zadd z nan a", "-ERR value is not a valid float\r\n"},
    {"zadd z ch gt 5 a 0 b 3 d", ":2\r\n"},
    {"zadd z xx ch 7 a 8 new", ":1\r\n"},
    {"zadd z lt 1 a", ":0\r\n"},
    {"zincrby z 1.5 a", "$3\r\n2.5\r\n"},
    {"zincrby z inf a", "$3\r\ninf\r\n"},
    {"zincrby z -inf a", "-ERR resulting score is not a number (NaN)\r\n"},
    {"zscore z a", "$3\r\ninf\r\n"},
    {"zscore z nope", "$-1\r\n"},
    {"zscore nope a", "$-1\r\n"},
    {"zmscore z a nope c", "*3\r\n$3\r\ninf\r\n$-1\r\n$1\r\n2\r\n"},
    {"zmscore nope a", "*1\r\n$-1\r\n"},
    {"zcard z", ":4\r\n"},
    {"zcard nope", ":0\r\n"},
    {"zcount z -inf +inf", ":4\r\n"},
    {"zcount z (1 2", ":1\r\n"},
    {"zcount z x 1", "-ERR min or max is not a float\r\n"},
    {"zlexcount z - +", ":4\r\n"},
    {"zlexcount z a b", "-ERR min or max not valid string range item\r\n"},
    {"zrank z c", ":1\r\n"},
    {"zrank z nope", "$-1\r\n"},
    /* Redis 7.2's WITHSCORE (docs/errors.md). */
    {"zrank z c withscore", "*2\r\n:1\r\n$1\r\n2\r\n"},
    {"zrank z nope withscore", "*-1\r\n"},
    {"zrank z c foo", "-ERR syntax error\r\n"},
    {"zrank z c withscore x",
     "-ERR wrong number of arguments for 'zrank' command\r\n"},
    {"zrevrank z c withscore", "*2\r\n:2\r\n$1\r\n2\r\n"},
    {"zrevrank z c", ":2\r\n"},
    {"zrange z 0 -1", "*4\r\n$1\r\nb\r\n$1\r\nc\r\n$1\r\nd\r\n$1\r\na\r\n"},
    {"zrange z 0 -1 withscores",
     "*8\r\n$1\r\nb\r\n$1\r\n1\r\n$1\r\nc\r\n$1\r\n2\r\n$1\r\nd\r\n$1\r\n3"
     "\r\n$1\r\na\r\n$3\r\ninf\r\n"},
    {"zrange z 0 -1 limit 0 1",
     "-ERR syntax error, LIMIT is only supported in combination with eithe"
     "r BYSCORE or BYLEX\r\n"},
    {"zrange z 0 -1 byscore limit 0", "-ERR syntax error\r\n"},
    {"zrange z a b", "-ERR value is not an integer or out of range\r\n"},
    {"zrange z (1 2 byscore", "*1\r\n$1\r\nc\r\n"},
    {"zrange z -inf +inf byscore withscores",
     "*8\r\n$1\r\nb\r\n$1\r\n1\r\n$1\r\nc\r\n$1\r\n2\r\n$1\r\nd\r\n$1\r\n3"
     "\r\n$1\r\na\r\n$3\r\ninf\r\n"},
    {"zrange z x y byscore", "-ERR min or max is not a float\r\n"},
    {"zrange z [a [c bylex", "*2\r\n$1\r\nb\r\n$1\r\nc\r\n"},
    {"zrange z a c bylex", "-ERR min or max not valid string range item\r\n"},
    {"zrange z 0 -1 byscore bylex", "-ERR syntax error\r\n"},
    {"zrange z 0 -1 withscores bylex",
     "-ERR syntax error, WITHSCORES not supported in combination with BYLE"
     "X\r\n"},
    {"zrange z + - bylex rev",
     "*4\r\n$1\r\na\r\n$1\r\nd\r\n$1\r\nc\r\n$1\r\nb\r\n"},
    {"zrange z +inf -inf byscore rev limit 1 2 withscores",
     "*4\r\n$1\r\nd\r\n$1\r\n3\r\n$1\r\nc\r\n$1\r\n2\r\n"},
    {"zrange z 0 -1 rev",
     "*4\r\n$1\r\na\r\n$1\r\nd\r\n$1\r\nc\r\n$1\r\nb\r\n"},
    {"zrangebyscore z 0 10 limit 0 1 withscores",
     "*2\r\n$1\r\nb\r\n$1\r\n1\r\n"},
    {"zrangebyscore z 0 10 limit 0", "-ERR syntax error\r\n"},
    {"zrangebyscore z 0 10 foo", "-ERR syntax error\r\n"},
    {"zrangebyscore z 0 10 rev", "-ERR syntax error\r\n"},
    {"zrevrangebyscore z 10 0 withscores",
     "*6\r\n$1\r\nd\r\n$1\r\n3\r\n$1\r\nc\r\n$1\r\n2\r\n$1\r\nb\r\n$1\r\n1"
     "\r\n"},
    {"zrangebylex z - + withscores",
     "-ERR syntax error, WITHSCORES not supported in combination with BYLE"
     "X\r\n"},
    {"zrangebylex z - +",
     "*4\r\n$1\r\nb\r\n$1\r\nc\r\n$1\r\nd\r\n$1\r\na\r\n"},
    {"zrevrangebylex z + -",
     "*4\r\n$1\r\na\r\n$1\r\nd\r\n$1\r\nc\r\n$1\r\nb\r\n"},
    {"zrevrange z 0 -1 withscores",
     "*8\r\n$1\r\na\r\n$3\r\ninf\r\n$1\r\nd\r\n$1\r\n3\r\n$1\r\nc\r\n$1\r"
     "\n2\r\n$1\r\nb\r\n$1\r\n1\r\n"},
    {"zrevrange z 0 -1 limit 0 1",
     "-ERR syntax error, LIMIT is only supported in combination with eithe"
     "r BYSCORE or BYLEX\r\n"},
    {"zrangestore d z 0 -1 withscores", "-ERR syntax error\r\n"},
    {"zrangestore d z 0 -1", ":4\r\n"},
    {"zrangestore d z 1 0", ":0\r\n"},
    {"exists d", ":0\r\n"},
    {"zrangestore d nope 0 -1", ":0\r\n"},
    {"zrem z nope a", ":1\r\n"},
    {"zrem nope a", ":0\r\n"},
    {"zremrangebyrank z x 1",
     "-ERR value is not an integer or out of range\r\n"},
    {"zremrangebyscore z x 1", "-ERR min or max is not a float\r\n"},
    {"zremrangebylex z a b",
     "-ERR min or max not valid string range item\r\n"},
    {"zadd r 1 a 2 b 3 c 4 d 5 e", ":5\r\n"},
    {"zremrangebyrank r 0 0", ":1\r\n"},
    {"zremrangebyscore r (2 3", ":1\r\n"},
    {"zremrangebylex r [d [e", ":2\r\n"},
    {"zrange r 0 -1 withscores", "*2\r\n$1\r\nb\r\n$1\r\n2\r\n"},
    {"zpopmin z -1", "-ERR value is out of range, must be positive\r\n"},
    {"zpopmin z x", "-ERR value is out of range, must be positive\r\n"},
    {"zpopmin z 1 2", "-ERR syntax error\r\n"},
    {"zadd p 1 a 2 b 3 c", ":3\r\n"},
    {"zpopmin p", "*2\r\n$1\r\na\r\n$1\r\n1\r\n"},
    {"zpopmax p 5", "*4\r\n$1\r\nc\r\n$1\r\n3\r\n$1\r\nb\r\n$1\r\n2\r\n"},
    {"zpopmin nope", "*0\r\n"},
    {"zpopmin nope 0", "*0\r\n"},
    {"zrandmember z x", "-ERR value is not an integer or out of range\r\n"},
    {"zrandmember z 1 withscores x", "-ERR syntax error\r\n"},
    {"zrandmember z -9223372036854775808",
     "-ERR value is out of range, value must between -9223372036854775807 "
     "and 9223372036854775807\r\n"},
    {"zrandmember z -9223372036854775807 withscores",
     "-ERR value is out of range\r\n"},
    {"zrandmember nope", "$-1\r\n"},
    {"zrandmember nope 5", "*0\r\n"},
    {"zadd u1 1 a 2 b", ":2\r\n"},
    {"zadd u2 3 b 4 c", ":2\r\n"},
    {"zunionstore d 0 u1",
     "-ERR at least 1 input key is needed for 'zunionstore' command\r\n"},
    {"zunionstore d x u1", "-ERR value is not an integer or out of range\r\n"},
    {"zunionstore d 2 u1", "-ERR syntax error\r\n"},
    {"zunionstore d 1 u1 weights", "-ERR syntax error\r\n"},
    {"zunionstore d 1 u1 weights x", "-ERR weight value is not a float\r\n"},
    {"zunionstore d 1 u1 aggregate foo", "-ERR syntax error\r\n"},
    {"zunionstore d 1 u1 withscores", "-ERR syntax error\r\n"},
    {"zunionstore d 2 u1 u2", ":3\r\n"},
    {"zrange d 0 -1 withscores",
     "*6\r\n$1\r\na\r\n$1\r\n1\r\n$1\r\nc\r\n$1\r\n4\r\n$1\r\nb\r\n$1\r\n5"
     "\r\n"},
    {"zinterstore d 2 u1 u2 weights 2 3 aggregate max", ":1\r\n"},
    {"zrange d 0 -1 withscores", "*2\r\n$1\r\nb\r\n$1\r\n9\r\n"},
    {"zdiffstore d 2 u1 u2", ":1\r\n"},
    {"zrange d 0 -1 withscores", "*2\r\n$1\r\na\r\n$1\r\n1\r\n"},
    {"zunion 2 u1 u2 withscores",
     "*6\r\n$1\r\na\r\n$1\r\n1\r\n$1\r\nc\r\n$1\r\n4\r\n$1\r\nb\r\n$1\r\n5"
     "\r\n"},
    {"zunion 2 u1 u2 aggregate min withscores",
     "*6\r\n$1\r\na\r\n$1\r\n1\r\n$1\r\nb\r\n$1\r\n2\r\n$1\r\nc\r\n$1\r\n4"
     "\r\n"},
    {"zinter 2 u1 u2 withscores", "*2\r\n$1\r\nb\r\n$1\r\n5\r\n"},
    {"zdiff 2 u1 u2", "*1\r\n$1\r\na\r\n"},
    {"zdiff 1 u1 weights 1", "-ERR syntax error\r\n"},
    {"zdiff 1 u1 aggregate sum", "-ERR syntax error\r\n"},
    {"zinter 0 u1",
     "-ERR at least 1 input key is needed for 'zinter' command\r\n"},
    {"zintercard 0 u1",
     "-ERR at least 1 input key is needed for 'zintercard' command\r\n"},
    {"zintercard 1 u1 limit -1", "-ERR LIMIT can't be negative\r\n"},
    {"zintercard 1 u1 limit x", "-ERR LIMIT can't be negative\r\n"},
    {"zintercard 1 u1 foo", "-ERR syntax error\r\n"},
    {"zintercard 2 u1", "-ERR syntax error\r\n"},
    {"zintercard 2 u1 u2", ":1\r\n"},
    {"zintercard 2 u1 u2 limit 0", ":1\r\n"},
    {"zunion -1 u1",
     "-ERR at least 1 input key is needed for 'zunion' command\r\n"},
    {"set str x", "+OK\r\n"},
    {"zunion 2 u1 str",
     "-WRONGTYPE Operation against a key holding the wrong kind of value\r"
     "\n"},
    {"zunionstore d 2 str u1 foo",
     "-WRONGTYPE Operation against a key holding the wrong kind of value\r"
     "\n"},
    {"zscan u1 0 type x", "-ERR syntax error\r\n"},
    {"zscan u1 0",
     "*2\r\n$1\r\n0\r\n*4\r\n$1\r\na\r\n$1\r\n1\r\n$1\r\nb\r\n$1\r\n2\r\n"},
    {"zscan nope 0", "*2\r\n$1\r\n0\r\n*0\r\n"},
    {"zscan str 0",
     "-WRONGTYPE Operation against a key holding the wrong kind of value\r"
     "\n"},
    {"zadd f 1.5 a 1e20 b -0.1 c", ":3\r\n"},
};

static const struct script_step resp3_script[] = {
    {"set a 1", "+OK\r\n"},
    {"get a", "$1\r\n1\r\n"},
    {"get nope", "_\r\n"},
    {"hset h a 1 b 2", ":2\r\n"},
    {"hgetall h", "%2\r\n$1\r\na\r\n$1\r\n1\r\n$1\r\nb\r\n$1\r\n2\r\n"},
    {"hgetall nope", "%0\r\n"},
    {"hrandfield h 2 withvalues",
     "*2\r\n*2\r\n$1\r\na\r\n$1\r\n1\r\n*2\r\n$1\r\nb\r\n$1\r\n2\r\n"},
    {"hmget h a x", "*2\r\n$1\r\n1\r\n_\r\n"},
    {"zadd z 1 a 2.5 b", ":2\r\n"},
    {"zscore z b", ",2.5\r\n"},
    {"zscore z x", "_\r\n"},
    {"zmscore z a x", "*2\r\n,1\r\n_\r\n"},
    {"zrange z 0 -1 withscores",
     "*2\r\n*2\r\n$1\r\na\r\n,1\r\n*2\r\n$1\r\nb\r\n,2.5\r\n"},
    {"zrange z 0 -1", "*2\r\n$1\r\na\r\n$1\r\nb\r\n"},
    {"zrangebyscore z -inf +inf withscores",
     "*2\r\n*2\r\n$1\r\na\r\n,1\r\n*2\r\n$1\r\nb\r\n,2.5\r\n"},
    {"zrevrange z 0 -1 withscores",
     "*2\r\n*2\r\n$1\r\nb\r\n,2.5\r\n*2\r\n$1\r\na\r\n,1\r\n"},
    {"zpopmin z", "*2\r\n$1\r\na\r\n,1\r\n"},
    {"zadd z 1 a", ":1\r\n"},
    {"zpopmin z 1", "*1\r\n*2\r\n$1\r\na\r\n,1\r\n"},
    {"zadd z 1 a 3 c", ":2\r\n"},
    {"zpopmax z 5",
     "*3\r\n*2\r\n$1\r\nc\r\n,3\r\n*2\r\n$1\r\nb\r\n,2.5\r\n*2\r\n$1\r\na"
     "\r\n,1\r\n"},
    {"zadd z 1 a 3 c", ":2\r\n"},
    {"zrandmember z 5 withscores",
     "*2\r\n*2\r\n$1\r\nc\r\n,3\r\n*2\r\n$1\r\na\r\n,1\r\n"},
    {"zincrby z 1 a", ",2\r\n"},
    {"zadd z incr 1 a", ",3\r\n"},
    {"zadd z xx incr 1 nope", "_\r\n"},
    {"zunion 1 z withscores",
     "*2\r\n*2\r\n$1\r\na\r\n,3\r\n*2\r\n$1\r\nc\r\n,3\r\n"},
    {"zscan z 0",
     "*2\r\n$1\r\n0\r\n*4\r\n$1\r\na\r\n$1\r\n3\r\n$1\r\nc\r\n$1\r\n3\r\n"},
    {"config get hz", "%1\r\n$2\r\nhz\r\n$2\r\n10\r\n"},
    {"command info get",
     "*1\r\n*10\r\n$3\r\nget\r\n:2\r\n~2\r\n+readonly\r\n+fast\r\n:1\r\n:1"
     "\r\n:1\r\n~3\r\n+@read\r\n+@string\r\n+@fast\r\n~0\r\n~1\r\n%3\r\n$5"
     "\r\nflags\r\n~2\r\n+RO\r\n+access\r\n$12\r\nbegin_search\r\n%2\r\n$4"
     "\r\ntype\r\n$5\r\nindex\r\n$4\r\nspec\r\n%1\r\n$5\r\nindex\r\n:1\r\n"
     "$9\r\nfind_keys\r\n%2\r\n$4\r\ntype\r\n$5\r\nrange\r\n$4\r\nspec\r\n"
     "%3\r\n$7\r\nlastkey\r\n:0\r\n$7\r\nkeystep\r\n:1\r\n$5\r\nlimit\r\n:"
     "0\r\n~0\r\n"},
    {"command info nope", "*1\r\n_\r\n"},
    {"multi", "+OK\r\n"},
    {"exec", "*0\r\n"},
    {"watch a", "+OK\r\n"},
    {"set a 2", "+OK\r\n"},
    {"multi", "+OK\r\n"},
    {"exec", "_\r\n"},
    {"incrbyfloat a 1.5", "$3\r\n3.5\r\n"},
    {"hincrbyfloat h a 1.5", "$3\r\n2.5\r\n"},
    {"time x", "-ERR wrong number of arguments for 'time' command\r\n"},
    {"client getname", "_\r\n"},
    {"object encoding nope", "_\r\n"},
    {"randomkey", "$1\r\na\r\n"},
    {"exec", "-ERR EXEC without MULTI\r\n"},
    {"client kill id 9999", ":0\r\n"},
};

static const struct script_step conn_script[] = {
    {"ping", "+PONG\r\n"},
    {"ping a", "$1\r\na\r\n"},
    {"ping a b", "-ERR wrong number of arguments for 'ping' command\r\n"},
    {"echo", "-ERR wrong number of arguments for 'echo' command\r\n"},
    {"echo x", "$1\r\nx\r\n"},
    {"select 0", "+OK\r\n"},
    {"select x", "-ERR value is not an integer or out of range\r\n"},
    {"select 99999999999",
     "-ERR value is out of range, value must between -2147483648 and 21474"
     "83647\r\n"},
    {"auth x",
     "-ERR AUTH <password> called without any password configured for the "
     "default user. Are you sure your configuration is correct?\r\n"},
    {"auth x y",
     "-WRONGPASS invalid username-password pair or user is disabled.\r\n"},
    {"auth default y", "+OK\r\n"},
    {"auth a b c", "-ERR syntax error\r\n"},
    {"hello 4", "-NOPROTO unsupported protocol version\r\n"},
    {"hello x", "-ERR Protocol version is not an integer or out of range\r\n"},
    {"hello 3 auth a", "-ERR Syntax error in HELLO option 'auth'\r\n"},
    {"hello 3 setname", "-ERR Syntax error in HELLO option 'setname'\r\n"},
    {"hello 3 foo", "-ERR Syntax error in HELLO option 'foo'\r\n"},
    {"hello 2 setname a b", "-ERR Syntax error in HELLO option 'b'\r\n"},
    {"client setname ok", "+OK\r\n"},
    {"client getname", "$2\r\nok\r\n"},
    {"client getname", "$2\r\nok\r\n"},
    {"client foo", "-ERR unknown subcommand 'foo'. Try CLIENT HELP.\r\n"},
    {"client kill",
     "-ERR wrong number of arguments for 'client|kill' command\r\n"},
    {"client kill 1.2.3.4:5", "-ERR No such client\r\n"},
    {"client kill id 999", ":0\r\n"},
    {"client kill id x", "-ERR client-id should be greater than 0\r\n"},
    {"client kill id 0", "-ERR client-id should be greater than 0\r\n"},
    {"client kill foo bar", "-ERR syntax error\r\n"},
    {"client kill type foo", "-ERR Unknown client type 'foo'\r\n"},
    {"client kill user bob", "-ERR No such user 'bob'\r\n"},
    {"client kill user default", ":0\r\n"},
    {"client kill skipme maybe", "-ERR syntax error\r\n"},
    {"client kill laddr x", ":0\r\n"},
    {"client kill id 1 skipme", "-ERR syntax error\r\n"},
    {"client list type foo", "-ERR Unknown client type 'foo'\r\n"},
    {"client list id x", "-ERR Invalid client ID\r\n"},
    {"client list id 1 x", "-ERR Invalid client ID\r\n"},
    {"client list foo", "-ERR syntax error\r\n"},
    {"client reply foo", "-ERR syntax error\r\n"},
    {"client no-evict x", "-ERR syntax error\r\n"},
    {"client no-evict on", "+OK\r\n"},
    {"multi", "+OK\r\n"},
    {"multi", "-ERR MULTI calls can not be nested\r\n"},
    {"watch a", "-ERR WATCH inside MULTI is not allowed\r\n"},
    {"set a b", "+QUEUED\r\n"},
    {"exec", "*1\r\n+OK\r\n"},
    {"exec", "-ERR EXEC without MULTI\r\n"},
    {"discard", "-ERR DISCARD without MULTI\r\n"},
    {"multi", "+OK\r\n"},
    {"set a", "-ERR wrong number of arguments for 'set' command\r\n"},
    {"exec",
     "-EXECABORT Transaction discarded because of previous errors.\r\n"},
    {"multi", "+OK\r\n"},
    {"foo", "-ERR unknown command 'foo', with args beginning with: \r\n"},
    {"exec",
     "-EXECABORT Transaction discarded because of previous errors.\r\n"},
    {"multi", "+OK\r\n"},
    {"incr", "-ERR wrong number of arguments for 'incr' command\r\n"},
    {"ping", "+QUEUED\r\n"},
    {"exec",
     "-EXECABORT Transaction discarded because of previous errors.\r\n"},
    {"exec x",
     "-EXECABORT Transaction discarded because of: wrong number of argumen"
     "ts for 'exec' command\r\n"},
    {"multi", "+OK\r\n"},
    {"exec x",
     "-EXECABORT Transaction discarded because of: wrong number of argumen"
     "ts for 'exec' command\r\n"},
    {"exec", "-ERR EXEC without MULTI\r\n"},
    {"watch", "-ERR wrong number of arguments for 'watch' command\r\n"},
    {"unwatch", "+OK\r\n"},
    {"multi", "+OK\r\n"},
    {"discard", "+OK\r\n"},
    {"multi", "+OK\r\n"},
    {"ping", "+QUEUED\r\n"},
    {"echo x", "+QUEUED\r\n"},
    {"get nope", "+QUEUED\r\n"},
    {"discard", "+OK\r\n"},
    {"set a 1", "+OK\r\n"},
    {"watch a", "+OK\r\n"},
    {"set a 2", "+OK\r\n"},
    {"multi", "+OK\r\n"},
    {"get a", "+QUEUED\r\n"},
    {"exec", "*-1\r\n"},
    {"watch a", "+OK\r\n"},
    {"multi", "+OK\r\n"},
    {"get a", "+QUEUED\r\n"},
    {"exec", "*1\r\n$1\r\n2\r\n"},
    {"config help",
     "*11\r\n+CONFIG <subcommand> [<arg> [value] [opt] ...]. Subcommands a"
     "re:\r\n+GET <pattern>\r\n+    Return parameters matching the glob-li"
     "ke <pattern> and their values.\r\n+SET <directive> <value>\r\n+    S"
     "et the configuration <directive> to <value>.\r\n+RESETSTAT\r\n+    R"
     "eset statistics reported by the INFO command.\r\n+REWRITE\r\n+    Re"
     "write the configuration file.\r\n+HELP\r\n+    Prints this help.\r\n"},
    {"config set hz 5 maxmemory", "-ERR syntax error\r\n"},
    {"config set foo bar",
     "-ERR Unknown option or number of arguments for CONFIG SET - 'foo'\r"
     "\n"},
    {"config set hz x",
     "-ERR CONFIG SET failed (possibly related to argument 'hz') - argumen"
     "t couldn't be parsed into an integer\r\n"},
    {"config set hz -1",
     "-ERR CONFIG SET failed (possibly related to argument 'hz') - argumen"
     "t must be between 0 and 2147483647 inclusive\r\n"},
    {"config set hz 5 hz 6",
     "-ERR CONFIG SET failed (possibly related to argument 'hz') - duplica"
     "te parameter\r\n"},
    {"config set databases 3",
     "-ERR CONFIG SET failed (possibly related to argument 'databases') - "
     "can't set immutable config\r\n"},
    {"config set proto-max-bulk-len abc",
     "-ERR CONFIG SET failed (possibly related to argument 'proto-max-bulk"
     "-len') - argument must be a memory value\r\n"},
    {"config set proto-max-bulk-len 10",
     "-ERR CONFIG SET failed (possibly related to argument 'proto-max-bulk"
     "-len') - argument must be between 1048576 and 9223372036854775807 in"
     "clusive\r\n"},
    {"config set proto-max-bulk-len 2mb", "+OK\r\n"},
    {"config get proto-max-bulk-len",
     "*2\r\n$18\r\nproto-max-bulk-len\r\n$7\r\n2097152\r\n"},
    {"config set proto-max-bulk-len 512mb", "+OK\r\n"},
    {"config get client-output-buffer-limit",
     "*2\r\n$26\r\nclient-output-buffer-limit\r\n$67\r\nnormal 0 0 0 slave"
     " 268435456 67108864 60 pubsub 33554432 8388608 60\r\n"},
    {"config get hz", "*2\r\n$2\r\nhz\r\n$2\r\n10\r\n"},
    {"config get HZ", "*2\r\n$2\r\nHZ\r\n$2\r\n10\r\n"},
    {"config get nothing", "*0\r\n"},
    {"config get",
     "-ERR wrong number of arguments for 'config|get' command\r\n"},
    {"command count x",
     "-ERR wrong number of arguments for 'command|count' command\r\n"},
    {"command getkeys get",
     "-ERR wrong number of arguments for 'command|getkeys' command\r\n"},
    {"command getkeys ping x", "-ERR The command has no key arguments\r\n"},
    {"command getkeys get a b",
     "-ERR Invalid number of arguments specified for command\r\n"},
    {"command getkeys foo a", "-ERR Invalid command specified\r\n"},
    {"command getkeys set a b", "*1\r\n$1\r\na\r\n"},
    {"command getkeys zunionstore d 2 a b",
     "*3\r\n$1\r\nd\r\n$1\r\na\r\n$1\r\nb\r\n"},
    {"command getkeys zunion 0 a",
     "-ERR Invalid arguments specified for command\r\n"},
    {"command getkeysandflags zunionstore d 2 a b",
     "*3\r\n*2\r\n$1\r\nd\r\n*2\r\n+OW\r\n+update\r\n*2\r\n$1\r\na\r\n*2\r"
     "\n+RO\r\n+access\r\n*2\r\n$1\r\nb\r\n*2\r\n+RO\r\n+access\r\n"},
    {"command getkeys mset a 1 b 2", "*2\r\n$1\r\na\r\n$1\r\nb\r\n"},
    {"command info get zadd",
     "*2\r\n*10\r\n$3\r\nget\r\n:2\r\n*2\r\n+readonly\r\n+fast\r\n:1\r\n:1"
     "\r\n:1\r\n*3\r\n+@read\r\n+@string\r\n+@fast\r\n*0\r\n*1\r\n*6\r\n$5"
     "\r\nflags\r\n*2\r\n+RO\r\n+access\r\n$12\r\nbegin_search\r\n*4\r\n$4"
     "\r\ntype\r\n$5\r\nindex\r\n$4\r\nspec\r\n*2\r\n$5\r\nindex\r\n:1\r\n"
     "$9\r\nfind_keys\r\n*4\r\n$4\r\ntype\r\n$5\r\nrange\r\n$4\r\nspec\r\n"
     "*6\r\n$7\r\nlastkey\r\n:0\r\n$7\r\nkeystep\r\n:1\r\n$5\r\nlimit\r\n:"
     "0\r\n*0\r\n*10\r\n$4\r\nzadd\r\n:-4\r\n*3\r\n+write\r\n+denyoom\r\n+"
     "fast\r\n:1\r\n:1\r\n:1\r\n*3\r\n+@write\r\n+@sortedset\r\n+@fast\r\n"
     "*0\r\n*1\r\n*6\r\n$5\r\nflags\r\n*2\r\n+RW\r\n+update\r\n$12\r\nbegi"
     "n_search\r\n*4\r\n$4\r\ntype\r\n$5\r\nindex\r\n$4\r\nspec\r\n*2\r\n$"
     "5\r\nindex\r\n:1\r\n$9\r\nfind_keys\r\n*4\r\n$4\r\ntype\r\n$5\r\nran"
     "ge\r\n$4\r\nspec\r\n*6\r\n$7\r\nlastkey\r\n:0\r\n$7\r\nkeystep\r\n:1"
     "\r\n$5\r\nlimit\r\n:0\r\n*0\r\n"},
    {"command info nosuch", "*1\r\n$-1\r\n"},
    {"command docs nosuch", "*0\r\n"},
    {"command list foo", "-ERR syntax error\r\n"},
    {"command list filterby module x", "*0\r\n"},
    {"command list filterby aclcat foo", "*0\r\n"},
    {"command help",
     "*21\r\n+COMMAND <subcommand> [<arg> [value] [opt] ...]. Subcommands "
     "are:\r\n+(no subcommand)\r\n+    Return details about all Redis comm"
     "ands.\r\n+COUNT\r\n+    Return the total number of commands in this "
     "Redis server.\r\n+LIST\r\n+    Return a list of all commands in this"
     " Redis server.\r\n+INFO [<command-name> ...]\r\n+    Return details "
     "about multiple Redis commands.\r\n+    If no command names are given"
     ", documentation details for all\r\n+    commands are returned.\r\n+D"
     "OCS [<command-name> ...]\r\n+    Return documentation details about "
     "multiple Redis commands.\r\n+    If no command names are given, docu"
     "mentation details for all\r\n+    commands are returned.\r\n+GETKEYS"
     " <full-command>\r\n+    Return the keys from a full Redis command.\r"
     "\n+GETKEYSANDFLAGS <full-command>\r\n+    Return the keys and the ac"
     "cess flags from a full Redis command.\r\n+HELP\r\n+    Prints this h"
     "elp.\r\n"},
    {"command foo", "-ERR unknown subcommand 'foo'. Try COMMAND HELP.\r\n"},
    {"object help",
     "*15\r\n+OBJECT <subcommand> [<arg> [value] [opt] ...]. Subcommands a"
     "re:\r\n+ENCODING <key>\r\n+    Return the kind of internal represent"
     "ation used in order to store the value\r\n+    associated with a <ke"
     "y>.\r\n+FREQ <key>\r\n+    Return the access frequency index of the "
     "<key>. The returned integer is\r\n+    proportional to the logarithm"
     " of the recent access frequency of the key.\r\n+IDLETIME <key>\r\n+ "
     "   Return the idle time of the <key>, that is the approximated numbe"
     "r of\r\n+    seconds elapsed since the last access to the key.\r\n+R"
     "EFCOUNT <key>\r\n+    Return the number of references of the value a"
     "ssociated with the specified\r\n+    <key>.\r\n+HELP\r\n+    Prints "
     "this help.\r\n"},
    {"time x", "-ERR wrong number of arguments for 'time' command\r\n"},
    {"quit x", "+OK\r\n"},
};

static void run_script(struct cfix *f, const struct script_step *steps,
                       size_t n)
{
    struct goblin_session_info si = {GOBLIN_TRANSPORT_TCP, "127.0.0.1:5001",
                                     "127.0.0.1:6379", 8, NULL};
    size_t i;

    for (i = 0; i < n; i++) {
        const char *got = CMD(steps[i].cmd);

        /* Valgrind's long doubles have 64 bits (see under_valgrind()):
         * run INCRBYFLOAT for the state it leaves, do not check it. */
        if (under_valgrind() && strstr(steps[i].cmd, "incrbyfloat") != NULL)
            continue;
        if (strcmp(got, steps[i].reply) != 0)
            print_message("step %zu: %s\n", i, steps[i].cmd);
        assert_string_equal(got, steps[i].reply);
        if (goblin_session_should_close(f->s)) {
            goblin_session_close(f->s);
            assert_int_equal(goblin_session_open(f->eng, &si, &f->s), 0);
        }
    }
}

#define RUN(script) \
    run_script(*state, (script), sizeof(script) / sizeof((script)[0]))

static void test_strings_match_redis(void **state)
{
    RUN(strings_script);
}

static void test_keyspace_matches_redis(void **state)
{
    RUN(keys_script);
}

static void test_hashes_match_redis(void **state)
{
    RUN(hash_script);
}

static void test_sorted_sets_match_redis(void **state)
{
    RUN(zset_script);
}

static void test_resp3_replies_match_redis(void **state)
{
    struct cfix *f = *state;

    assert_int_equal(CMD("hello 3")[0], '%');
    RUN(resp3_script);
}

static void test_connection_and_multi_match_redis(void **state)
{
    RUN(conn_script);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        CMD_TEST(test_strings_match_redis),
        CMD_TEST(test_keyspace_matches_redis),
        CMD_TEST(test_hashes_match_redis),
        CMD_TEST(test_sorted_sets_match_redis),
        CMD_TEST(test_resp3_replies_match_redis),
        CMD_TEST(test_connection_and_multi_match_redis),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
