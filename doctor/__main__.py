from paddle_doctor.cli import main

main()
