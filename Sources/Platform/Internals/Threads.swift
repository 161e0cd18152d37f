#if canImport(Glibc)
import Glibc
#endif

// The C library's calls on threads and semaphores.

@discardableResult
func system_pthread_create(
    _ thread: UnsafeMutablePointer<pthread_t>, _ attributes: UnsafePointer<pthread_attr_t>?,
    _ start: @convention(c) (UnsafeMutableRawPointer?) -> UnsafeMutableRawPointer?, _ argument: UnsafeMutableRawPointer?
) -> Int32 {
    pthread_create(thread, attributes, start, argument)
}

@discardableResult
func system_pthread_detach(_ thread: pthread_t) -> Int32 {
    pthread_detach(thread)
}

@discardableResult
func system_pthread_self() -> pthread_t {
    pthread_self()
}

@discardableResult
func system_pthread_equal(_ first: pthread_t, _ second: pthread_t) -> Int32 {
    pthread_equal(first, second)
}

@discardableResult
func system_sem_init(_ semaphore: UnsafeMutablePointer<sem_t>, _ shared: Int32, _ value: UInt32) -> Int32 {
    sem_init(semaphore, shared, value)
}

@discardableResult
func system_sem_destroy(_ semaphore: UnsafeMutablePointer<sem_t>) -> Int32 {
    sem_destroy(semaphore)
}

@discardableResult
func system_sem_post(_ semaphore: UnsafeMutablePointer<sem_t>) -> Int32 {
    sem_post(semaphore)
}

@discardableResult
func system_sem_wait(_ semaphore: UnsafeMutablePointer<sem_t>) -> Int32 {
    retryingInterrupts { sem_wait(semaphore) }
}
