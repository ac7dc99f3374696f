package services

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/redis/go-redis/v9/maintnotifications"
)

// Cache is the little of Redis the redemption front uses (see redisFront):
// keys with expiries, set if absent, read, overwritten, and deleted only by
// the holder of their value. Every method fails fast when Redis is away, and
// no failure of it ever reaches a client.
type Cache interface {
	// SetNX sets key to value for ttl unless it exists, and reports whether
	// it did.
	SetNX(ctx context.Context, key, value string, ttl time.Duration) (bool, error)
	// Get returns key's value, and false when it does not exist.
	Get(ctx context.Context, key string) (string, bool, error)
	// Set sets key to value for ttl.
	Set(ctx context.Context, key, value string, ttl time.Duration) error
	// DelIf deletes key if its value is still value.
	DelIf(ctx context.Context, key, value string) error
	// Close releases the connections.
	Close() error
}

// redisCache is Cache over go-redis.
type redisCache struct{ c *redis.Client }

// redisOpTimeout bounds one Redis call: Redis answers in well under a
// millisecond, and a slow Redis must not slow a redemption down.
const redisOpTimeout = 250 * time.Millisecond

// NewRedisCache returns a Cache over the Redis server at url
// (redis://[user:password@]host:port/db, or rediss:// with TLS). It fails
// only on a malformed URL: connections are made on use, so a Redis that is
// down now is used as soon as it is up.
func NewRedisCache(url string) (Cache, error) {
	o, err := redis.ParseURL(url)
	if err != nil {
		return nil, fmt.Errorf("redis url: %w", err)
	}
	o.DialTimeout, o.ReadTimeout, o.WriteTimeout, o.PoolTimeout = redisOpTimeout, redisOpTimeout, redisOpTimeout, redisOpTimeout
	o.MaxRetries = -1 // a failed call falls back to the database at once
	o.DisableIdentity = true
	o.MaintNotificationsConfig = &maintnotifications.Config{Mode: maintnotifications.ModeDisabled}
	return redisCache{c: redis.NewClient(o)}, nil
}

// PingCache checks that c answers, for a start-up warning.
func PingCache(ctx context.Context, c Cache) error {
	_, _, err := c.Get(ctx, "coupond:ping")
	return err
}

func (r redisCache) SetNX(ctx context.Context, key, value string, ttl time.Duration) (bool, error) {
	ctx, cancel := context.WithTimeout(ctx, redisOpTimeout)
	defer cancel()
	res, err := r.c.SetArgs(ctx, key, value, redis.SetArgs{Mode: "NX", TTL: ttl}).Result()
	if errors.Is(err, redis.Nil) {
		return false, nil
	}
	return err == nil && res == "OK", err
}

func (r redisCache) Get(ctx context.Context, key string) (string, bool, error) {
	ctx, cancel := context.WithTimeout(ctx, redisOpTimeout)
	defer cancel()
	v, err := r.c.Get(ctx, key).Result()
	if errors.Is(err, redis.Nil) {
		return "", false, nil
	}
	return v, err == nil, err
}

func (r redisCache) Set(ctx context.Context, key, value string, ttl time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, redisOpTimeout)
	defer cancel()
	return r.c.Set(ctx, key, value, ttl).Err()
}

var delIf = redis.NewScript(`if redis.call("GET", KEYS[1]) == ARGV[1] then return redis.call("DEL", KEYS[1]) end return 0`)

func (r redisCache) DelIf(ctx context.Context, key, value string) error {
	ctx, cancel := context.WithTimeout(ctx, redisOpTimeout)
	defer cancel()
	return delIf.Run(ctx, r.c, []string{key}, value).Err()
}

func (r redisCache) Close() error { return r.c.Close() }
