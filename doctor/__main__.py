from paddle_doctor.entry import main

main()
